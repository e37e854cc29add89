#!/usr/bin/env bash
# Prometheus's own PromQL engine for the alerts' tests (test/cli/commands/manifest/): the script
# runner of tools/promql (promqltest, github.com/prometheus/prometheus at the version pinned by its
# go.mod and go.sum), built once per module and source content into a cache with `go test -c`.
# Idempotent; prints the binary's path (run it with -scripts FILE_OR_DIRECTORY). Needs Go on PATH
# the first time.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
: "${PROMQL_CACHE:=/var/cache/interlock-promql}"
die() { echo "ensure-promql: $*" >&2; exit 1; }

hash=$( (cd "$repo/tools/promql" && cat go.mod go.sum ./*.go) | sha256sum | cut -c1-16)
out=$PROMQL_CACHE/$hash
if [ ! -x "$out/promql.test" ]; then
  command -v go >/dev/null || die "Go is needed to build the PromQL runner (tools/promql/go.mod); none on PATH"
  mkdir -p "$out"
  build_log=$PROMQL_CACHE/build-$hash.log
  if ! (cd "$repo/tools/promql" && nice go test -c -buildvcs=false -o "$out/promql.test.tmp.$$" .) >"$build_log" 2>&1; then
    # Name the module that could not be fetched.
    grep -E 'reading|not found|unknown revision|verifying|missing go.sum|cannot find module' "$build_log" | head -5 >&2 || true
    tail -5 "$build_log" >&2
    rm -f "$out/promql.test.tmp.$$"
    die "the build failed (full log: $build_log)"
  fi
  mv "$out/promql.test.tmp.$$" "$out/promql.test"
fi
echo "$out/promql.test"
