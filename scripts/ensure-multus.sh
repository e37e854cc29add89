#!/usr/bin/env bash
# Multus's real binaries (k8snetworkplumbingwg/multus-cni tag v4.2.2, module
# gopkg.in/k8snetworkplumbingwg/multus-cni.v4): cmd/multus (the thin plugin), cmd/multus-shim and
# cmd/multus-daemon (the thick plugin), at the version cluster/multus/go.mod and go.sum pin, built
# once per module content into a cache and used by the cluster tests (e2e/cluster/multus.test.ts).
# Idempotent; prints the directory holding the three binaries. Needs Go on PATH the first time.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
module=$repo/cluster/multus
: "${MULTUS_CACHE:=/var/cache/interlock-multus}"
die() { echo "ensure-multus: $*" >&2; exit 1; }
readonly MODULE=gopkg.in/k8snetworkplumbingwg/multus-cni.v4
readonly BINARIES=(multus multus-shim multus-daemon)

# What multus-cni's own build stamps (hack/build-go.sh at v4.2.2: pkg/multus.version and friends),
# which `multus --version` prints. The module proxy serves the tag itself, so its version is the tag
# (the commit is not in the module: left as upstream's "unknown commit").
ldflags() {
  local version
  version=$(cd "$module" && go list -m -f '{{.Version}}' "$MODULE")
  echo "-s -w -X $MODULE/pkg/multus.version=$version -X $MODULE/pkg/multus.gitTreeState=clean" \
    "-X $MODULE/pkg/multus.releaseStatus=,released"
}

hash=$( (cd "$module" && cat go.mod go.sum tools.go && echo CGO_ENABLED=0 && sed -n '/^ldflags()/,/^}/p' "$repo/scripts/ensure-multus.sh") | sha256sum | cut -c1-16)
out=$MULTUS_CACHE/$hash
built() { for binary in "${BINARIES[@]}"; do [ -x "$out/$binary" ] || return 1; done; }
if ! built; then
  command -v go >/dev/null || die "Go is needed to build $MODULE (cluster/multus/go.mod); none on PATH"
  mkdir -p "$out"
  build_log=$MULTUS_CACHE/build-$hash.log
  : >"$build_log"
  flags=$(ldflags 2>>"$build_log") || { tail -5 "$build_log" >&2; die "cannot resolve $MODULE in cluster/multus/go.mod (full log: $build_log)"; }
  for binary in "${BINARIES[@]}"; do
    # The proxy here lists no versions of the module (403) but serves v4.2.2 itself: go.mod pins it.
    # Static, as upstream's hack/build-go.sh builds them (CGO_ENABLED=0): the thick daemon runs in
    # whatever image carries it.
    if ! (cd "$module" && CGO_ENABLED=0 nice go build -buildvcs=false -trimpath -ldflags "$flags" \
      -o "$out/$binary.tmp.$$" "$MODULE/cmd/$binary") >>"$build_log" 2>&1; then
      # Name the module (and version) that could not be fetched.
      grep -E 'reading|not found|unknown revision|verifying|missing go.sum|cannot find module' "$build_log" | head -5 >&2 || true
      tail -5 "$build_log" >&2
      rm -f "$out/$binary.tmp.$$"
      rmdir "$out" 2>/dev/null || true
      die "building $MODULE/cmd/$binary failed (full log: $build_log)"
    fi
    mv "$out/$binary.tmp.$$" "$out/$binary"
  done
fi
echo "$out"
