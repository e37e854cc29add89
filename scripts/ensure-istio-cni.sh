#!/usr/bin/env bash
# Istio's real CNI plugin (istio.io/istio/cni/cmd/istio-cni, the binary istio's chart installs into
# the node's CNI bin directory) at the version cluster/mesh-cni/go.mod and go.sum pin, built once
# per module content into a cache and reused by the cluster tests (e2e/cluster/istio.test.ts).
# Idempotent; prints the binary's path. Needs Go on PATH the first time (about 7.5 min cold).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
module=$repo/cluster/mesh-cni
: "${ISTIO_CNI_CACHE:=/var/cache/interlock-istio-cni}"
die() { echo "ensure-istio-cni: $*" >&2; exit 1; }

# What istio's own build stamps (common/scripts/report_build_info.sh): the release and its commit,
# which the plugin prints for CNI VERSION. The module proxy has the tag only as a pseudo-version.
ldflags() {
  local version revision
  version=$(cd "$module" && go list -m -f '{{.Version}}' istio.io/istio)
  revision=${version##*-}
  echo "-s -w -X istio.io/istio/pkg/version.buildVersion=1.27.0" \
    "-X istio.io/istio/pkg/version.buildGitRevision=$revision -X istio.io/istio/pkg/version.buildStatus=Clean"
}

hash=$( (cd "$module" && cat go.mod go.sum tools.go && sed -n '/^ldflags()/,/^}/p' "$repo/scripts/ensure-istio-cni.sh") | sha256sum | cut -c1-16)
out=$ISTIO_CNI_CACHE/$hash
if [ ! -x "$out/istio-cni" ]; then
  command -v go >/dev/null || die "Go is needed to build istio-cni (cluster/mesh-cni/go.mod); none on PATH"
  mkdir -p "$out"
  build_log=$ISTIO_CNI_CACHE/build-$hash.log
  # The checksum database does not know istio's release pseudo-versions: go.sum pins their hashes.
  if ! (cd "$module" && GONOSUMDB=istio.io nice go build -buildvcs=false -trimpath -ldflags "$(ldflags)" \
    -o "$out/istio-cni.tmp.$$" istio.io/istio/cni/cmd/istio-cni) >"$build_log" 2>&1; then
    # Name the module (and version) that could not be fetched.
    grep -E 'reading|not found|unknown revision|verifying|missing go.sum|cannot find module' "$build_log" | head -5 >&2 || true
    tail -5 "$build_log" >&2
    rm -f "$out/istio-cni.tmp.$$"
    rmdir "$out" 2>/dev/null || true
    die "the build failed (full log: $build_log)"
  fi
  mv "$out/istio-cni.tmp.$$" "$out/istio-cni"
fi
echo "$out/istio-cni"
