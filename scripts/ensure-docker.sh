#!/usr/bin/env bash
# Makes a Docker engine and the local base image available, idempotently:
#   - a running engine is left alone; otherwise docker.io is installed (if missing) and dockerd
#     started in the background;
#   - mesh-interlock-base:local (Debian bookworm minbase plus this machine's Node binary, nothing
#     of the project) is built only when it is missing, because no registry can be pulled from.
# With --engine-only (what `npm run image` on the official base asks for) the base is not made.
# The host also needs iptables (the e2e harness plays the mesh CNI with it) and iproute2.
set -euo pipefail

engine_only=0
[ "${1:-}" = --engine-only ] && engine_only=1

BASE_IMAGE=${INTERLOCK_LOCAL_BASE:-mesh-interlock-base:local}
DOCKERD_LOG=${DOCKERD_LOG:-/var/log/interlock-dockerd.log}

log() { printf 'ensure-docker: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs packages and starts dockerd)"

apt_updated=0
apt_install() {
  if [ $apt_updated = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

need_pkgs=()
command -v dockerd >/dev/null || need_pkgs+=(docker.io)
# docker.io pulls iptables in, but the harness uses both backends' restore tools directly.
command -v iptables-nft-restore >/dev/null || need_pkgs+=(iptables)
command -v nft >/dev/null || need_pkgs+=(nftables)
command -v ip >/dev/null || need_pkgs+=(iproute2)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  log "installing ${need_pkgs[*]}"
  apt_install "${need_pkgs[@]}"
fi

if docker info >/dev/null 2>&1; then
  log "engine already running"
else
  if [ -S /var/run/docker.sock ] && ! pgrep -x dockerd >/dev/null; then
    rm -f /var/run/docker.sock # stale socket from an engine that died
  fi
  if ! pgrep -x dockerd >/dev/null; then
    log "starting dockerd (log: $DOCKERD_LOG)"
    # setsid: the engine must outlive this script and whatever job control started it.
    setsid nohup dockerd >"$DOCKERD_LOG" 2>&1 </dev/null &
  fi
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { tail -n 30 "$DOCKERD_LOG" >&2 || true; die "dockerd did not come up within 60 s"; }
  log "engine ready"
fi

[ $engine_only = 0 ] || exit 0

if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  log "$BASE_IMAGE present"
  exit 0
fi

# The Debian mirror this machine already uses, read from its apt sources at run time so that no
# mirror host name is ever written into the repository.
debian_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    # one-line format: deb [options] URI SUITE COMPONENTS...
    awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                       if ($(i+1) == "bookworm") { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822 format: blank-line separated stanzas with Types / URIs / Suites fields.
    awk 'BEGIN { RS = ""; FS = "\n" }
         { types = uris = suites = ""
           for (j = 1; j <= NF; j++) {
             if ($j ~ /^Types:/)  types  = " " substr($j, 7)  " "
             if ($j ~ /^URIs:/)   uris   = substr($j, 6)
             if ($j ~ /^Suites:/) suites = " " substr($j, 8) " "
           }
           if (types ~ / deb / && suites ~ / bookworm /) { split(uris, u, " "); print u[1]; exit } }' "$f"
  done
}

mirror=$(debian_mirror | head -n 1)
[ -n "$mirror" ] || die "no Debian bookworm mirror found in /etc/apt/sources.list{,.d}"

node_bin=$(command -v node) || die "node is not installed on this machine"
node_major=$("$node_bin" -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "host node is v$node_major; the base needs Node 20+"

command -v debootstrap >/dev/null || { log "installing debootstrap"; apt_install debootstrap; }

rootfs=$(mktemp -d /var/tmp/interlock-base.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
log "debootstrap bookworm (minbase) into $rootfs"
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/dev/null

# Node is copied rather than apt-installed: bookworm's nodejs is 18, and nothing can be pulled.
install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
# Debian's multiarch directory of this machine (x86_64-linux-gnu, aarch64-linux-gnu).
multiarch="$(uname -m)-linux-gnu"
missing=()
while read -r lib; do
  [ -n "$lib" ] || continue
  found=0
  for d in "lib/$multiarch" "usr/lib/$multiarch" lib64 usr/lib lib; do
    [ -e "$rootfs/$d/$lib" ] && { found=1; break; }
  done
  [ $found = 1 ] || missing+=("$lib")
done < <(ldd "$node_bin" | awk '$2 == "=>" && $3 ~ /^\// { n = split($3, p, "/"); print p[n] }')
[ ${#missing[@]} = 0 ] || die "the base lacks libraries node links against: ${missing[*]}"
env -u NODE_EXTRA_CA_CERTS chroot "$rootfs" /usr/local/bin/node -e 'process.exit(0)' || die "node does not run inside the base rootfs"

# Caches only make the image bigger; apt lists are fetched again by whatever builds on the base.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/tmp/* "$rootfs"/var/log/*.log

log "importing $BASE_IMAGE"
tar --numeric-owner -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/bin/bash"]' \
  --message "Debian bookworm minbase plus Node $("$node_bin" --version)" \
  - "$BASE_IMAGE" >/dev/null
log "$BASE_IMAGE built ($(docker image inspect -f '{{.Size}}' "$BASE_IMAGE") bytes)"
