#!/usr/bin/env bash
# Installs what the CNI and CRI e2e tests (e2e/cni/, e2e/cri/) need, idempotently: Debian's
# containerd 1.6 (with ctr, runc and its CRI plugin) and containernetworking-plugins (bridge,
# host-local, loopback, portmap... in /usr/lib/cni), util-linux for unshare/nsenter, and gcc
# with a static libc for the CRI suite's pause image. Nothing is installed when all are present.
# It never starts containerd: each test starts its own, in a network namespace it made, with its
# own root, state and socket.
set -euo pipefail

log() { printf 'ensure-containerd: %s\n' "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "error: run as root (it installs packages)"; exit 1; }

need=()
command -v containerd >/dev/null || need+=(containerd)
command -v ctr >/dev/null || need+=(containerd)
command -v runc >/dev/null || need+=(runc)
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] || need+=(containernetworking-plugins)
command -v unshare >/dev/null || need+=(util-linux)
command -v nsenter >/dev/null || need+=(util-linux)
command -v ip >/dev/null || need+=(iproute2)
# The CRI suite (e2e/cri/) compiles its pod sandbox's pause binary statically.
command -v gcc >/dev/null || need+=(gcc)
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || [ -f /usr/lib/aarch64-linux-gnu/libc.a ] || need+=(libc6-dev)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
