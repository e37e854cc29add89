#!/usr/bin/env bash
# The node's processes, run by scripts/cluster.sh inside a private mount namespace (containerd 1.6
# puts its shims' sockets under /run/containerd whatever its state directory is) and, each, in the
# node network namespace. It records its mount namespace so that `down` finds every process of the
# cluster by that identity, and stops them all when it is told to stop.
set -uo pipefail
. "$(dirname "$0")/cluster-env.sh"
state=$1
bin=$2
pki=$state/pki
readlink /proc/$$/ns/mnt >"$state/mntns"
# A node's mounts are shared (systemd makes / rshared), and the kubelet refuses a HostToContainer
# mount of a private one: the re-checking node agent's view of pods' network namespaces needs it.
# The namespace was made private first (unshare --propagation private), so nothing reaches the host.
mount --make-rshared /
mkdir -p /run/containerd
mount -t tmpfs interlock-cluster-run /run/containerd
trap 'kill $(jobs -p) 2>/dev/null; wait; exit 0' TERM INT

start() {
  local name=$1
  shift
  nsenter --net="/run/netns/$CLUSTER_NETNS" "$@" >>"$state/logs/$name.log" 2>&1 &
}

# The kubelet's cgroup root must exist in every hierarchy before it starts (cgroup v1 here).
for hierarchy in /sys/fs/cgroup/*/; do
  [ -f "$hierarchy/cgroup.procs" ] && mkdir -p "$hierarchy$CLUSTER_CGROUP"
done

start containerd containerd --config "$state/containerd.toml"
start etcd "$bin/etcd" --name default --data-dir "$state/etcd" --unsafe-no-fsync \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster default=http://127.0.0.1:2380 --listen-metrics-urls ''
start kube-apiserver "$bin/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
  --bind-address "$CLUSTER_NODE_IP" --advertise-address "$CLUSTER_NODE_IP" --secure-port 6443 \
  --service-cluster-ip-range "$CLUSTER_SERVICE_CIDR" \
  --client-ca-file "$pki/ca.crt" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --kubelet-client-certificate "$pki/admin.crt" --kubelet-client-key "$pki/admin.key" \
  --kubelet-certificate-authority "$pki/ca.crt" \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
  --enable-aggregator-routing=true --allow-privileged=true --profiling=false \
  --kubelet-preferred-address-types InternalIP
start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$state/admin.kubeconfig" \
  --bind-address 127.0.0.1 --leader-elect=false --service-account-private-key-file "$pki/sa.key" \
  --root-ca-file "$pki/ca.crt" --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
  --use-service-account-credentials=true
start kube-scheduler "$bin/kube-scheduler" --kubeconfig "$state/admin.kubeconfig" --bind-address 127.0.0.1 \
  --leader-elect=false
start kube-proxy "$bin/kube-proxy" --config "$state/kube-proxy.yaml"
start kubelet "$bin/kubelet" --config "$state/kubelet.yaml" --kubeconfig "$state/node.kubeconfig" \
  --root-dir "$state/kubelet" --node-ip "$CLUSTER_NODE_IP" --hostname-override "$CLUSTER_NODE"
wait
