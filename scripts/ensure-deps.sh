#!/usr/bin/env bash
# Installs what building Interlock and running its namespace tests need, idempotently: the
# kernel-facing tools (iproute2, iptables with both backends, nftables, setpriv, sysctl) and the
# npm dependencies. Nothing is installed when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'ensure-deps: %s\n' "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "error: run as root (network namespaces and iptables need it)"; exit 1; }

need=()
command -v ip >/dev/null || need+=(iproute2)
command -v iptables-nft-restore >/dev/null || need+=(iptables)
command -v iptables-legacy-restore >/dev/null || need+=(iptables)
command -v nft >/dev/null || need+=(nftables)
command -v setpriv >/dev/null || need+=(util-linux)
command -v sysctl >/dev/null || need+=(procps)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# The tests that check YAML and Events with a real Kubernetes client need kubectl.
bash scripts/ensure-kubectl.sh

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm dependencies"
  npm ci --no-audit --no-fund --loglevel=error
fi
