#!/usr/bin/env bash
# The whole cluster flow on a real kind cluster: build the image, load it, print the RBAC, inject
# a Deployment, and check that the unmeshed pod is blocked with exit 95 and a Warning Event that
# `kubectl describe pod` shows; then the Istio drop-in (exit 126). Not part of CI: it needs kind,
# kubectl and Docker with registry access for kind's node image. See e2e/kind/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
CLUSTER=${INTERLOCK_KIND_CLUSTER:-interlock-e2e}
IMAGE=${INTERLOCK_IMAGE:-mesh-interlock:dev}
NS=interlock-e2e
HERE=e2e/kind/manifests

log() { printf 'kind-e2e: %s\n' "$*" >&2; }
for tool in kind kubectl docker node; do command -v "$tool" >/dev/null || { log "error: $tool is required"; exit 1; }; done

if ! kind get clusters | grep -qx "$CLUSTER"; then
  log "creating cluster $CLUSTER"
  kind create cluster --name "$CLUSTER" --config "$HERE/kind-config.yaml" --wait 120s
fi
kubectl config use-context "kind-$CLUSTER" >/dev/null

log "building and loading $IMAGE"
npm run --silent build
npm run --silent image
kind load docker-image --name "$CLUSTER" "$IMAGE"

log "namespace, RBAC for the Event, injected workload"
kubectl apply -f - <<<"$(sed -n '1,/^---$/p' "$HERE/web.yaml" | sed '$d')"
node dist/cli/main.js manifest --rbac --namespace "$NS" | kubectl apply -f -
node dist/cli/main.js inject --report-event --image "$IMAGE" -f "$HERE/web.yaml" | kubectl apply -f -

log "waiting for the validator to fail (no mesh: interception is missing)"
for _ in $(seq 60); do
  code=$(kubectl -n "$NS" get pods -l app=web -o jsonpath='{.items[0].status.initContainerStatuses[0].lastState.terminated.exitCode}{.items[0].status.initContainerStatuses[0].state.terminated.exitCode}' 2>/dev/null || true)
  [ -n "$code" ] && break
  sleep 2
done
[ "${code:-}" = 95 ] || { log "error: expected exit code 95 from linkerd-network-validator, got '${code:-none}'"; exit 1; }
pod=$(kubectl -n "$NS" get pods -l app=web -o jsonpath='{.items[0].metadata.name}')
kubectl -n "$NS" describe pod "$pod" | tee /dev/stderr | grep -E 'Warning +(InterceptionMissing|PodNetworkMissing|ProbeUnroutable) .*interlock' >/dev/null \
  || { log "error: no Interlock Warning Event under Events"; exit 1; }
log "linkerd-network-validator: exit 95 and the Event in kubectl describe pod: ok"

log "Istio drop-in: istio-validation's own args with Interlock's image"
kubectl apply -f "$HERE/istio-validation-pod.yaml"
for _ in $(seq 60); do
  code=$(kubectl -n "$NS" get pod istio-dropin -o jsonpath='{.status.initContainerStatuses[0].state.terminated.exitCode}' 2>/dev/null || true)
  [ -n "$code" ] && break
  sleep 2
done
[ "${code:-}" = 126 ] || { log "error: expected exit code 126 from istio-validation, got '${code:-none}'"; exit 1; }
log "istio-validation drop-in: exit 126: ok"
log "done; delete the cluster with: kind delete cluster --name $CLUSTER"
