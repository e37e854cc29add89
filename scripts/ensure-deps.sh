#!/usr/bin/env bash
# Installs what building Interlock, linting it and running its unit, namespace and foundation
# tests need, idempotently: the kernel-facing tools (iproute2's ip and ss, iptables with both
# backends and both families, nftables, util-linux's setpriv and nsenter, procps' sysctl and
# pgrep), libfaketime (the clock-step tests), git (the foundation tests list the tracked files),
# zsh and fish (the completion tests drive them) and the npm dependencies, linters included
# (eslint, knip, dependency-cruiser are devDependencies). Node.js 20 itself is the one
# prerequisite. Nothing is installed when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'ensure-deps: %s\n' "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "error: run as root (network namespaces and iptables need it)"; exit 1; }

command -v node >/dev/null && command -v npm >/dev/null || { log "error: Node.js 20 and npm are needed (Debian's own nodejs is too old)"; exit 1; }

# command -> the Debian package that provides it
declare -A provider=(
  [ip]=iproute2 [ss]=iproute2
  [iptables-nft-restore]=iptables [iptables-legacy-restore]=iptables [iptables-nft-save]=iptables
  [iptables-legacy-save]=iptables [ip6tables-nft-restore]=iptables [ip6tables-legacy-restore]=iptables
  [faketime]=faketime [nft]=nftables [setpriv]=util-linux [nsenter]=util-linux [sysctl]=procps [pgrep]=procps [git]=git [openssl]=openssl
  [zsh]=zsh [fish]=fish
)
need=()
for command in "${!provider[@]}"; do
  command -v "$command" >/dev/null && continue
  package=${provider[$command]}
  [[ " ${need[*]} " == *" $package "* ]] || need+=("$package")
done
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq </dev/null
  apt-get install -y -qq --no-install-recommends "${need[@]}" </dev/null >/dev/null
fi

# The tests that check YAML and Events with a real Kubernetes client need kubectl.
bash scripts/ensure-kubectl.sh

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm dependencies"
  npm ci --no-audit --no-fund --loglevel=error </dev/null
fi
