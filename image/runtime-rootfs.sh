#!/bin/sh
# Copies into DIR only what the image runs, so the image carries no package manager, shell
# utilities, npm, docs or locales: node, the launcher's /bin/sh (dash), iptables-nft-save,
# iptables-legacy-save (and ip6tables-*, the multi-call binaries with their modules), nft,
# nsenter, setpriv and cat (the node agent's re-check reads a pod's rules in a child that entered
# its network namespace and dropped CAP_SYS_ADMIN), and
# every shared library they load, then checks inside DIR that each one starts.
#   sh image/runtime-rootfs.sh DIR   (run as root in the Dockerfile's tools stage)
set -eu
out=$1
mkdir -p "$out"

add() {
  for path in "$@"; do
    [ -e "$path" ] || { echo "runtime-rootfs: missing $path" >&2; exit 1; }
    cp -a --parents "$path" "$out"
  done
}

# A path and every symlink on the way to its file (libfoo.so.1 -> libfoo.so.1.2.3).
add_chain() {
  path=$1
  while [ -L "$path" ]; do
    cp -a --parents "$path" "$out"
    target=$(readlink "$path")
    case $target in /*) path=$target ;; *) path=$(dirname "$path")/$target ;; esac
  done
  add "$path"
}

node=$(command -v node)
modules=$(dirname "$(find /usr/lib -path '*/xtables/libxt_REDIRECT.so' | head -n 1)")
[ -d "$modules" ] || { echo "runtime-rootfs: no xtables modules directory" >&2; exit 1; }
binaries="$node /usr/sbin/xtables-nft-multi /usr/sbin/xtables-legacy-multi /usr/sbin/nft /bin/dash /usr/bin/nsenter /usr/bin/setpriv /usr/bin/prlimit /bin/cat /opt/interlock/netlink.node"

for file in $binaries "$modules"/*.so; do
  ldd "$file" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
done | sort -u | while read -r lib; do add_chain "$lib"; done
for file in $binaries; do add_chain "$file"; done
add "$modules"

# The command names Interlock runs, linked straight to their multi-call binary (no alternatives).
for name in iptables ip6tables iptables-save ip6tables-save iptables-restore ip6tables-restore \
  iptables-nft iptables-nft-save iptables-nft-restore ip6tables-nft ip6tables-nft-save ip6tables-nft-restore; do
  ln -sf xtables-nft-multi "$out/usr/sbin/$name"
done
for name in iptables-legacy iptables-legacy-save iptables-legacy-restore ip6tables-legacy ip6tables-legacy-save \
  ip6tables-legacy-restore; do
  ln -sf xtables-legacy-multi "$out/usr/sbin/$name"
done
ln -sf dash "$out/bin/sh"
for file in /etc/protocols /etc/services /etc/ethertypes /etc/nsswitch.conf; do
  [ -e "$file" ] && add "$file"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' > "$out/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$out/etc/group"
mkdir -p "$out/tmp" "$out/run" "$out/usr/local/bin"
chmod 1777 "$out/tmp"

# Each must start inside DIR alone, or the image would fail in a pod instead of here.
chroot "$out" /usr/local/bin/node -e 0 2>/dev/null || chroot "$out" "$node" -e 0
for command in "iptables-nft-save --version" "iptables-legacy-save --version" "ip6tables-nft-save --version" \
  "ip6tables-legacy-save --version" "nft --version" "setpriv --version" "prlimit --version"; do
  chroot "$out" /bin/sh -c "PATH=/usr/sbin:/usr/bin:/sbin:/bin $command" >/dev/null
done
