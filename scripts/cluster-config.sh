#!/usr/bin/env bash
# The cluster's configuration files, under its state directory: kubeconfigs, the kubelet's and
# kube-proxy's configurations, containerd's, and the node's CNI network (the real bridge plugin).
set -euo pipefail
. "$(dirname "$0")/cluster-env.sh"
state=$1
pki=$state/pki

kubeconfig() {
  cat >"$state/$1.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: interlock
  cluster:
    server: https://$CLUSTER_NODE_IP:6443
    certificate-authority: $pki/ca.crt
users:
- name: $1
  user:
    client-certificate: $pki/$1.crt
    client-key: $pki/$1.key
contexts:
- name: interlock
  context: {cluster: interlock, user: $1}
current-context: interlock
YAML
}
kubeconfig admin
kubeconfig node

cat >"$state/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $CLUSTER_NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: /$CLUSTER_CGROUP
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://$state/containerd.sock
imageServiceEndpoint: unix://$state/containerd.sock
# No host resolver for pods: nothing in a pod may resolve (or reach) the outside world. The
# cluster DNS address is in the Service range and no Service holds it: the node's local route ends
# what a pod sends it, and the kubelet does not warn MissingClusterDNS on every pod.
resolvConf: ""
clusterDNS: [$CLUSTER_DNS_IP]
clusterDomain: cluster.local
podLogsDir: $state/pod-logs
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
localStorageCapacityIsolation: false
YAML

cat >"$state/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $state/admin.kubeconfig}
hostnameOverride: $CLUSTER_NODE
bindAddress: $CLUSTER_NODE_IP
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
mode: iptables
clusterCIDR: $CLUSTER_POD_CIDR
# The conntrack table is the host's: kube-proxy leaves its size and timeouts alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML

cri='plugins."io.containerd.grpc.v1.cri"'
cat >"$state/containerd.toml" <<TOML
version = 2
root = "$state/containerd-root"
state = "$state/containerd-state"
disabled_plugins = ["io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$state/containerd.sock"
[ttrpc]
  address = "$state/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[$cri]
  sandbox_image = "docker.io/library/$CLUSTER_PAUSE_IMAGE"
  # The machine lacks CAP_SYS_RESOURCE: the sandbox's oom_score_adj -998 would fail the pod.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
[$cri.cni]
  bin_dir = "$state/cni-bin"
  conf_dir = "$state/net.d"
  max_conf_num = 1
[$cri.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[$cri.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[$cri.containerd.runtimes.runc.options]
  Root = "$state/runc"
  SystemdCgroup = false
TOML

# The primary network: the real bridge plugin. A mesh's plugin is chained after it by the tests.
cat >"$state/net.d/10-interlock-cluster.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "interlock-cluster",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "ilkc-br0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$CLUSTER_POD_CIDR" }]],
        "routes": [{ "dst": "0.0.0.0/0" }],
        "dataDir": "$state/cni-data"
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
JSON
