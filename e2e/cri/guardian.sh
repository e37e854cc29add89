#!/bin/sh
# Cleans up a CRI node whose test process is gone without stopping it (Ctrl-C, a crash, a kill):
# started detached beside the node, it waits for the owner to exit; if the node's directory is
# still there, it kills what the node ran (the pods, by the node's cgroup parent; containerd and
# its shims, by its private mount namespace: never by name), then removes the node's network
# namespace, cgroups and directory. After a clean stop there is nothing left, and it just exits.
#   sh guardian.sh OWNER_PID ROOT NAME
owner=$1 root=$2 name=$3
while kill -0 "$owner" 2>/dev/null; do sleep 1; done
[ -d "$root" ] || exit 0
for procs in $(find /sys/fs/cgroup -path "*/$name/*" -name cgroup.procs 2>/dev/null); do
  xargs -r kill -9 < "$procs" 2>/dev/null
done
mntns=$(cat "$root/mntns" 2>/dev/null)
if [ -n "$mntns" ]; then
  for proc in /proc/[0-9]*; do
    [ "$(readlink "$proc/ns/mnt" 2>/dev/null)" = "$mntns" ] && kill -9 "${proc#/proc/}" 2>/dev/null
  done
fi
sleep 1
ip netns del "$name" 2>/dev/null
find /sys/fs/cgroup -depth -type d -path "*/$name*" -exec rmdir {} \; 2>/dev/null
rm -rf "$root"
