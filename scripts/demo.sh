#!/usr/bin/env bash
# The demo: a pod network namespace wired into a sink namespace (nothing leaves the machine),
# Linkerd's CNI rules applied, `interlock validate` run as an unprivileged uid with no
# capabilities: once meshed (exit 0), once after the rules are flushed (exit 95, with the reason).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
npm run build --silent

# Names carry the pid, so two demos (or a demo and the test that runs it) never share a namespace.
pod=il-demo-$$-pod
sink=il-demo-$$-sink
podIf=ild$$a
sinkIf=ild$$b
# The validator runs as uid 65534, which cannot read a checkout in a 0700 directory (/root, any
# `mktemp -d`): it runs from a world-readable copy of the build, made here and removed on exit.
tmp=
stage=
cleanup() {
  ip netns del "$pod" 2>/dev/null || true; ip netns del "$sink" 2>/dev/null || true
  [ -z "$tmp" ] || rm -rf "$tmp"; [ -z "$stage" ] || rm -rf "$stage"
}
trap cleanup EXIT
tmp=$(mktemp -d); chmod 777 "$tmp"
stage=$(node scripts/stage-runtime.mjs)

ip netns add "$pod"; ip netns add "$sink"
ip link add "$podIf" type veth peer name "$sinkIf"
ip link set "$podIf" netns "$pod"; ip link set "$sinkIf" netns "$sink"
ip -n "$pod" link set "$podIf" name eth0
for ns in "$pod" "$sink"; do ip -n "$ns" link set lo up; done
ip -n "$pod" link set eth0 up; ip -n "$sink" link set "$sinkIf" up
ip -n "$sink" addr add 10.244.7.1/24 dev "$sinkIf"
ip -n "$pod" addr add 10.244.7.2/24 dev eth0
ip -n "$pod" route add default via 10.244.7.1
ip -n "$sink" addr add fd00:244:7::1/64 dev "$sinkIf" nodad
ip -n "$pod" addr add fd00:244:7::2/64 dev eth0 nodad
ip -n "$pod" -6 route add default via fd00:244:7::1
# The sink answers every uncaptured packet with "unreachable" and routes nowhere.
ip netns exec "$sink" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
ip -n "$sink" route add unreachable default; ip -n "$sink" -6 route add unreachable default

# Linkerd's CNI ruleset as iptables-nft-save read it back from the kernel (the corpus case
# linkerd/cni-default), kept here so the demo needs nothing outside the repository.
rules=scripts/demo/linkerd-cni-default.rules
ip netns exec "$pod" iptables-nft-restore < "$rules"
ip netns exec "$pod" ip6tables-nft-restore < "$rules"

validate() {
  set +e
  # From inside the staged copy: uid 65534 may not be able to enter the checkout.
  (cd "$stage" && ip netns exec "$pod" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs \
    node "$stage/dist/cli/main.js" validate --mesh linkerd --timeout 10s --log-format plain --termination-log "$tmp/termination-log")
  code=$?
  set -e
  echo
  echo "exit code: $code"
  echo "termination message (what 'kubectl describe pod' shows):"
  sed 's/^/    /' "$tmp/termination-log"
}

echo "=== 1. A meshed pod: Linkerd's CNI rules are in place (IPv4 and IPv6)"
validate
echo
echo "=== 2. The same pod after the mesh CNI's rules are gone (the CNI never ran)"
ip netns exec "$pod" iptables-nft -t nat -F; ip netns exec "$pod" iptables-nft -t nat -X
ip netns exec "$pod" ip6tables-nft -t nat -F; ip netns exec "$pod" ip6tables-nft -t nat -X
validate
