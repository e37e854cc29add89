# The local cluster's names and addresses, read by scripts/cluster*.sh and the cluster tests
# (e2e/cluster/). Private ranges that no test machine routes: the node namespace holds them all.
: "${CLUSTER_STATE:=/var/lib/interlock-cluster}"
: "${CLUSTER_CACHE:=/var/cache/interlock-cluster}"
CLUSTER_NODE=interlock-node
CLUSTER_NETNS=ilk-cluster
CLUSTER_VETH_HOST=ilk-cluster0
CLUSTER_VETH_NODE=ilk-node0
# The host's end of the veth, and the node's address (the API server, the kubelet).
CLUSTER_HOST_IP=10.231.0.1
CLUSTER_NODE_IP=10.231.0.2
CLUSTER_POD_CIDR=10.232.0.0/24
CLUSTER_SERVICE_CIDR=10.233.0.0/24
CLUSTER_KUBERNETES_SERVICE_IP=10.233.0.1
CLUSTER_DNS_IP=10.233.0.10
# The kubelet's cgroup root: every pod's cgroup is under it, in each hierarchy.
CLUSTER_CGROUP=interlock-cluster
CLUSTER_PAUSE_IMAGE=mesh-interlock-pause:cluster
KUBE_VERSION=v1.33.13
export CLUSTER_STATE CLUSTER_CACHE
