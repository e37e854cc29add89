#!/usr/bin/env bash
# The whole test suite, as CI runs it: the five vitest projects (vitest.config.ts) in order: unit
# and root (test/), then containers (testcontainers, e2e/) against the freshly built image, then
# the CRI runtime (e2e/cri/), then a real Kubernetes (e2e/cluster/). Installs what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-deps.sh
# Debian's containerd and CNI plugins: the CNI unit tests ask the real bridge plugin for its
# versions, and the CNI and CRI e2e suites (e2e/cni/, e2e/cri/) run containerd themselves.
bash scripts/ensure-containerd.sh
npm run build --silent
# Tests and e2e code are type-checked too: vitest itself only strips types.
npm run typecheck --silent
# Lint (typescript-eslint), unused files/exports/dependencies (knip) and the layers of
# docs/ARCHITECTURE.md (dependency-cruiser): a violation fails the run before any test starts.
npm run lint --silent

# The real helm for the chart's tests (test/chart/), built from tools/helm/go.mod once per machine.
command -v go >/dev/null || { echo "test: Go is needed to build helm and the PromQL engine (tools/)" >&2; exit 1; }
bash scripts/ensure-helm.sh >/dev/null
# Prometheus's own PromQL engine for the alerts' tests (test/cli/commands/manifest/), built from
# tools/promql/go.mod once per machine.
bash scripts/ensure-promql.sh >/dev/null
# Istio's real CNI plugin for the cluster project (e2e/cluster/istio.test.ts), built from
# cluster/mesh-cni/go.mod once per machine (about 7.5 minutes cold).
bash scripts/ensure-istio-cni.sh >/dev/null
# Multus's real thin plugin (and the thick shim and daemon) for e2e/cluster/multus.test.ts, built
# from cluster/multus/go.mod once per machine (3-7 minutes cold).
bash scripts/ensure-multus.sh >/dev/null

results=$(mktemp -d)
status=0
# The suite's temporary files go to a directory of its own (sticky and world-writable, like /tmp,
# for the tests that run as other uids), so that what a test leaves behind is seen and named at the
# end, and a run beside other work on the machine does not count their files as ours.
suite_tmp=$(mktemp -d /tmp/interlock-suite.XXXXXX)
chmod 1777 "$suite_tmp"
export TMPDIR=$suite_tmp
# Whatever ends the run (a failure under set -e, Ctrl-C, SIGTERM from CI), its temporary files go
# with it: a test killed before its own cleanup leaves nothing in /tmp.
# The cluster too, when this run started it, and the project running then with its workers: a
# signal reaches this shell while it waits for a project started in the background (below).
project_pid=''
cluster_ours=0
kill_tree() {
  local child
  for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do kill_tree "$child"; done
  kill -s TERM "$1" 2>/dev/null || true
}
cleanup() {
  [ -n "$project_pid" ] && kill_tree "$project_pid"
  [ "$cluster_ours" = 1 ] && bash scripts/cluster.sh down >/dev/null 2>&1
  rm -rf --one-file-system "$suite_tmp" "$results"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# in_background COMMAND...: runs it as a child this shell waits for, so that a signal is handled at
# once (a foreground child would first run to its end); its failure fails the run.
in_background() {
  "$@" &
  project_pid=$!
  wait "$project_pid" || status=$?
  project_pid=''
}
project() { in_background env INTERLOCK_IMAGE="$image" npx vitest run --project "$1" $(json "$1"); }
json() { echo --reporter=default --reporter=json --outputFile="$results/$1.json"; }
# The projects of vitest.config.ts, each once what it needs is ready. Unit tests run without any
# capability: one that needs root fails there (scripts/test-unit.sh).
in_background bash scripts/test-unit.sh $(json unit)
image=${INTERLOCK_IMAGE:-mesh-interlock:dev}
project root

bash scripts/ensure-docker.sh
# INTERLOCK_IMAGE names the image built and tested (default mesh-interlock:dev), so that runs on a
# shared Docker engine need not overwrite each other's image. The tests ask no registry: the image
# is built on the local base (INTERLOCK_BASE=official tests the official one instead).
IMAGE=$image npm run image --silent -- --base "${INTERLOCK_BASE:-local}"
project containers
# The kubelet's path: containerd's CRI plugin, real CNI plugins, the API stand-in and kubectl (e2e/cri/).
bash scripts/ensure-kubectl.sh
project cri
# Kubernetes itself (e2e/cluster/): v1.33.13 built from its Go modules into a cache on the first run
# (several minutes on a fresh machine), started and removed by the project (scripts/cluster.sh).
command -v go >/dev/null || { echo "test: Go is needed to build the cluster (cluster/kube/go.mod)" >&2; exit 1; }
bash scripts/cluster.sh status >/dev/null 2>&1 || cluster_ours=1
project cluster

# One closing line for all projects, so a reader (or CI) sees the total at the end.
node -e '
  const fs = require("fs");
  let passed = 0, failed = 0, skipped = 0;
  for (const f of process.argv.slice(1)) {
    if (!fs.existsSync(f)) { failed++; continue; }
    const r = JSON.parse(fs.readFileSync(f, "utf8"));
    passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + r.numTodoTests;
  }
  console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
' "$results"/{unit,root,containers,cri,cluster}.json
rm -rf "$results"

# A test that leaves a temporary directory behind fails the run, naming it.
leftovers=$(find "$suite_tmp" -mindepth 1 -maxdepth 1 -name 'interlock-*' -printf '%f\n' | sort)
if [ -n "$leftovers" ]; then
  echo "the suite left $(echo "$leftovers" | wc -l) temporary directories behind in $suite_tmp:" >&2
  echo "$leftovers" | sed 's/^/  /' >&2
  status=1
fi
exit $status
