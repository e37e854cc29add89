#!/usr/bin/env bash
# Installs Debian's kubectl (a client only; no cluster runs here) for the tests that check
# Interlock's YAML and Events with a real Kubernetes client. Idempotent: nothing happens when
# kubectl is already on PATH.
set -euo pipefail
command -v kubectl >/dev/null && exit 0
[ "$(id -u)" = 0 ] || { echo "ensure-kubectl: error: run as root to install kubectl" >&2; exit 1; }
echo "ensure-kubectl: installing kubectl" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends kubectl >/dev/null
