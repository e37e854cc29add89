#!/usr/bin/env bash
# The Prometheus Operator's own CRDs (PodMonitor, PrometheusRule) for the cluster's monitoring test
# (e2e/cluster/monitoring.test.ts): github.com/prometheus-operator/prometheus-operator at the
# version and checksum pinned by cluster/prometheus-operator/go.mod and go.sum, downloaded from the
# Go module proxy into Go's module cache (its example/prometheus-operator-crd/, as upstream's
# README applies them). Idempotent; prints the directory of the CRD files. Needs Go on PATH.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "ensure-prometheus-crds: $*" >&2; exit 1; }
command -v go >/dev/null || die "Go is needed (cluster/prometheus-operator/go.mod); none on PATH"
module=github.com/prometheus-operator/prometheus-operator
json=$(cd "$repo/cluster/prometheus-operator" && go mod download -json "$module") ||
  die "the download of $module failed: $json"
dir=$(printf '%s' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
crds=$dir/example/prometheus-operator-crd
for kind in podmonitors prometheusrules; do
  [ -f "$crds/monitoring.coreos.com_$kind.yaml" ] || die "$crds has no monitoring.coreos.com_$kind.yaml"
done
echo "$crds"
