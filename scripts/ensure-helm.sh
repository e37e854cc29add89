#!/usr/bin/env bash
# The real helm for the chart's tests (test/chart/): helm.sh/helm/v3/cmd/helm at the version
# pinned by tools/helm/go.mod and go.sum, built once per module content into a cache and reused.
# Idempotent; prints the binary's path. Needs Go on PATH the first time.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
: "${HELM_CACHE:=/var/cache/interlock-helm}"
die() { echo "ensure-helm: $*" >&2; exit 1; }

# What helm's own Makefile stamps: its version, and the Kubernetes version it assumes without a
# cluster (helm template, lint; the default otherwise is v1.20) from the client-go it is built with.
ldflags() {
  local helm client minor
  helm=$(cd "$repo/tools/helm" && go list -m -f '{{.Version}}' helm.sh/helm/v3)
  client=$(cd "$repo/tools/helm" && go list -m -f '{{.Version}}' k8s.io/client-go)
  minor=$(echo "$client" | cut -d. -f2)
  echo "-X helm.sh/helm/v3/internal/version.version=$helm" \
    "-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor" \
    "-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor"
}

hash=$( (cd "$repo/tools/helm" && cat go.mod go.sum && sed -n '/^ldflags()/,/^}/p' "$repo/scripts/ensure-helm.sh") | sha256sum | cut -c1-16)
out=$HELM_CACHE/$hash
if [ ! -x "$out/helm" ]; then
  command -v go >/dev/null || die "Go is needed to build helm (tools/helm/go.mod); none on PATH"
  mkdir -p "$out"
  build_log=$HELM_CACHE/build-$hash.log
  if ! (cd "$repo/tools/helm" && nice go build -buildvcs=false -trimpath -ldflags "$(ldflags)" -o "$out/helm.tmp.$$" helm.sh/helm/v3/cmd/helm) >"$build_log" 2>&1; then
    # Name the module that could not be fetched.
    grep -E 'reading|not found|unknown revision|verifying|missing go.sum|cannot find module' "$build_log" | head -5 >&2 || true
    tail -5 "$build_log" >&2
    rm -f "$out/helm.tmp.$$"
    die "the build failed (full log: $build_log)"
  fi
  mv "$out/helm.tmp.$$" "$out/helm"
fi
echo "$out/helm"
