#!/usr/bin/env bash
# A one-node Kubernetes cluster on this machine, from Kubernetes' own Go modules (cluster/kube/):
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy and the kubelet on a
# containerd of its own, in a network namespace of its own. `up` prints KUBECONFIG=<path> last;
# `down` removes every process, mount, namespace, cgroup and file it made, also after a killed run.
#
#   bash scripts/cluster.sh up|down|status
#
# Nothing leaves the machine: the node namespace's default route is unreachable, pods route only
# to it, and the host reaches the API server over one veth /30 (docs/testing.md, "The cluster").
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=cluster-env.sh
. "$repo/scripts/cluster-env.sh"

log() { printf 'cluster: %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

# The binaries, built once per module content into the cache: a second start does not compile.
build() {
  local hash out
  hash=$( (cd "$repo/cluster/kube" && cat go.mod go.sum main.go $(find stub -type f | sort) && version_flags) | sha256sum | cut -c1-16)
  out=$CLUSTER_CACHE/$hash
  if [ ! -x "$out/kube-cluster" ]; then
    command -v go >/dev/null || die "Go is needed to build the cluster (cluster/kube/go.mod); none on PATH"
    log "building Kubernetes $KUBE_VERSION and etcd from cluster/kube (first time: several minutes)"
    mkdir -p "$out"
    local build_log=$CLUSTER_CACHE/build-$hash.log
    if ! (cd "$repo/cluster/kube" && nice go build -buildvcs=false -ldflags "$(version_flags)" -o "$out/kube-cluster.tmp" .) >"$build_log" 2>&1; then
      # Name the module that could not be fetched, never leave half a cluster.
      grep -E 'reading|not found|unknown revision|verifying|missing go.sum|cannot find module' "$build_log" | head -5 >&2 || true
      tail -5 "$build_log" >&2
      die "the build failed (full log: $build_log); nothing was started"
    fi
    mv "$out/kube-cluster.tmp" "$out/kube-cluster"
  fi
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubectl; do
    ln -sf kube-cluster "$out/$name"
  done
  echo "$out"
}

# The version every component reports (kubectl version, the Node's kubeletVersion): a build from
# the module cache has no git tree to stamp it from.
version_flags() {
  local minor=${KUBE_VERSION#v1.}
  minor=${minor%%.*}
  local p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    printf -- '-X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean ' \
      "$p" "$KUBE_VERSION" "$p" "$p" "$minor" "$p"
  done
}

healthy() {
  [ -f "$CLUSTER_STATE/bin" ] || return 1
  "$(cat "$CLUSTER_STATE/bin")/kubectl" --kubeconfig "$CLUSTER_STATE/admin.kubeconfig" --request-timeout=5s \
    get --raw /readyz >/dev/null 2>&1
}

up() {
  if [ -f "$CLUSTER_STATE/mntns" ]; then
    if healthy; then
      log "the cluster is already running: reusing it"
      host_routes
      # An image rebuilt since (npm run image && npm run cluster) replaces the node's copy.
      images
      echo "KUBECONFIG=$CLUSTER_STATE/admin.kubeconfig"
      return
    fi
    log "a previous cluster did not end cleanly: removing what it left"
    down
  fi
  local bin
  bin=$(build)
  for tool in containerd ctr runc openssl nsenter unshare ip iptables gcc docker; do
    command -v "$tool" >/dev/null || die "$tool is needed (scripts/ensure-containerd.sh, scripts/ensure-deps.sh)"
  done
  # The images come from Docker after the node starts: a daemon found stopped then would leave half
  # a cluster, so it is started (or refused) before anything else.
  docker info >/dev/null 2>&1 || bash "$repo/scripts/ensure-docker.sh" ||
    die "no Docker engine, and scripts/ensure-docker.sh could not start one (it must run as root)"
  mkdir -p "$CLUSTER_STATE"/{logs,pki,net.d,cni-bin,cni-data,kubelet,pod-logs}
  echo "$bin" >"$CLUSTER_STATE/bin"
  bash "$repo/scripts/cluster-pki.sh" "$CLUSTER_STATE"
  cp /usr/lib/cni/{bridge,host-local,loopback,portmap} "$CLUSTER_STATE/cni-bin/"
  bash "$repo/scripts/cluster-config.sh" "$CLUSTER_STATE"
  network
  log "starting the node (logs: $CLUSTER_STATE/logs/)"
  setsid unshare -m --propagation private bash "$repo/scripts/cluster-node.sh" "$CLUSTER_STATE" "$bin" \
    </dev/null >>"$CLUSTER_STATE/logs/node.log" 2>&1 &
  echo $! >"$CLUSTER_STATE/supervisor.pid"
  wait_for "the supervisor's mount namespace" 30 test -s "$CLUSTER_STATE/mntns"
  wait_for "containerd" 120 test -S "$CLUSTER_STATE/containerd.sock"
  images
  wait_for "the API server" 300 healthy
  wait_for "node $CLUSTER_NODE Ready" 300 node_ready
  log "up in ${SECONDS}s"
  echo "KUBECONFIG=$CLUSTER_STATE/admin.kubeconfig"
}

node_ready() {
  local bin
  bin=$(cat "$CLUSTER_STATE/bin")
  [ "$("$bin/kubectl" --kubeconfig "$CLUSTER_STATE/admin.kubeconfig" get node "$CLUSTER_NODE" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

# wait_for WHAT SECONDS COMMAND...: polls until COMMAND succeeds; past the deadline (wall clock:
# a loaded machine makes each poll slow) names what and shows the logs' tails.
wait_for() {
  local what=$1 deadline=$((SECONDS + $2))
  shift 2
  while ((SECONDS < deadline)); do
    "$@" && return 0
    [ -f "$CLUSTER_STATE/supervisor.pid" ] && ! kill -0 "$(cat "$CLUSTER_STATE/supervisor.pid")" 2>/dev/null &&
      break
    sleep 0.2
  done
  for f in "$CLUSTER_STATE"/logs/*.log; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -8 "$f" >&2; }
  done
  down
  die "$what did not come up; everything was removed"
}

# The node namespace, its unreachable default routes, and one veth /30 to the host for the API.
network() {
  ip netns add "$CLUSTER_NETNS"
  ip -n "$CLUSTER_NETNS" link set lo up
  ip netns exec "$CLUSTER_NETNS" sysctl -q -w net.ipv4.ip_forward=1
  ip -n "$CLUSTER_NETNS" route add unreachable default
  ip -n "$CLUSTER_NETNS" -6 route add unreachable default
  # Host-network pods (the node agent) reach Services as a node's processes do: the route lookup
  # comes before kube-proxy's DNAT in nat OUTPUT, so the Service range needs a route; a local one
  # ends anything kube-proxy does not translate on the node itself.
  ip -n "$CLUSTER_NETNS" route add local "$CLUSTER_SERVICE_CIDR" dev lo
  ip link add "$CLUSTER_VETH_HOST" type veth peer name "$CLUSTER_VETH_NODE" netns "$CLUSTER_NETNS"
  ip addr add "$CLUSTER_HOST_IP/30" dev "$CLUSTER_VETH_HOST"
  ip link set "$CLUSTER_VETH_HOST" up
  ip -n "$CLUSTER_NETNS" addr add "$CLUSTER_NODE_IP/30" dev "$CLUSTER_VETH_NODE"
  ip -n "$CLUSTER_NETNS" link set "$CLUSTER_VETH_NODE" up
  host_routes
}

# From the host, the pod range goes through the node (a test reaches a pod as Prometheus would)
# and the Service range nowhere: the host's default route would otherwise carry a packet for
# either off the machine. Replaced, so a second start over a kept cluster changes nothing.
host_routes() {
  ip route replace "$CLUSTER_POD_CIDR" via "$CLUSTER_NODE_IP" dev "$CLUSTER_VETH_HOST"
  ip route replace unreachable "$CLUSTER_SERVICE_CIDR"
}

# The sandbox image (a static pause, built here: nothing is pulled) and Interlock's image.
images() {
  local sock=$CLUSTER_STATE/containerd.sock image=${INTERLOCK_IMAGE:-mesh-interlock:dev}
  if ! docker image inspect "$CLUSTER_PAUSE_IMAGE" >/dev/null 2>&1; then
    # In a subshell whose exit removes the build directory, also when a step fails.
    (
      dir=$(mktemp -d "${TMPDIR:-/tmp}/interlock-cluster-pause-XXXXXX")
      trap 'rm -rf "$dir"' EXIT
      gcc -static -Os -s -o "$dir/pause" "$repo/e2e/cri/pause/pause.c"
      tar -C "$dir" --owner=0 --group=0 --mtime=@0 -cf "$dir/rootfs.tar" pause
      docker import --change 'ENTRYPOINT ["/pause"]' "$dir/rootfs.tar" "$CLUSTER_PAUSE_IMAGE" >/dev/null
    )
  fi
  docker save "$CLUSTER_PAUSE_IMAGE" | ctr -a "$sock" -n k8s.io images import - >/dev/null
  if docker image inspect "$image" >/dev/null 2>&1; then
    docker save "$image" | ctr -a "$sock" -n k8s.io images import - >/dev/null
    log "loaded $image into the node's containerd"
  else
    log "no image $image in Docker: build it with 'IMAGE=$image npm run image -- --base local', then 'npm run cluster' again loads it"
  fi
}

down() {
  local ns=''
  [ -f "$CLUSTER_STATE/mntns" ] && ns=$(cat "$CLUSTER_STATE/mntns")
  # Every process of the node's mount namespace (the components, containerd, its shims), found by
  # the namespace's identity, never by name; then every process in the pods' cgroups.
  for signal in TERM KILL; do
    if [ -n "$ns" ]; then
      for p in /proc/[0-9]*; do
        [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$ns" ] && kill -s "$signal" "${p#/proc/}" 2>/dev/null || true
      done
    fi
    while read -r f; do
      xargs -r kill -s "$signal" <"$f" 2>/dev/null || true
    done < <(find /sys/fs/cgroup/*/"$CLUSTER_CGROUP" -name cgroup.procs 2>/dev/null)
    [ "$signal" = TERM ] && sleep 2
  done
  # The cgroups, deepest first.
  find /sys/fs/cgroup/*/"$CLUSTER_CGROUP" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  ip netns del "$CLUSTER_NETNS" 2>/dev/null || true
  ip link del "$CLUSTER_VETH_HOST" 2>/dev/null || true
  ip route del unreachable "$CLUSTER_SERVICE_CIDR" 2>/dev/null || true
  # Mounts were made in the node's private mount namespace, gone with it; any that reached the
  # host (an older run) are taken off before the files go.
  grep -F " $CLUSTER_STATE" /proc/self/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf --one-file-system "$CLUSTER_STATE"
  log "down: nothing of the cluster is left"
}

status() {
  if healthy; then
    echo "running: KUBECONFIG=$CLUSTER_STATE/admin.kubeconfig"
  else
    echo "not running"
    return 3
  fi
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *)
    echo "usage: bash scripts/cluster.sh up|down|status" >&2
    exit 64
    ;;
esac
