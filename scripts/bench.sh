#!/usr/bin/env bash
# Benchmarks, printed as figures beside baselines measured in the same run (never asserted):
#   1. start-up (issue #37): `interlock validate` from the snapshot vs `node -e 0` and the floor (an
#      empty snapshot, one of validate's built-ins) in a pod namespace, bare environment: median
#      wall, CPU, peak RSS, ratio and target; then issue #37's storm (100 pods at once, idle);
#   2. the rules engine: the sample tracer on synthetic 1k/10k/100k-rule nat tables, and the complete
#      analysis of every corpus case, of the synthetic tables and of a hostile 2,000-RETURN table;
#      then hostile rules (issue #43): validate in a 128 MiB memory cgroup on 20,000 RETURNs, and a
#      re-check sweep of 12 hostile pods beside 4 clean ones (scripts/bench-hostile.mjs);
#   3. `interlock node` against the API stand-in: reaction, footprint (110/5,000 pods), 50-pod storm;
#   4. `interlock cni-check` on a directory of 50 CNI configuration files;
#   4b. `interlock webhook`: 1,000 admissions at 50 concurrent over TLS, p50/p99 and peak RSS;
#   5. the image: `docker start` to exit of the init container vs `true` from the same base, and
#      its size against its base;
#   6. the kubelet's path: pod start through containerd's CRI with and without the validator;
#      then `interlock node --recheck-interval` sweeping 110 real sandboxes (issue #34).
#   7. a node boot storm: 110 validators at once, idle, beside 60 busy loops, with the wall clock
#      stepped +/-1 h; the snapshot, the npm bin and the image's files (scripts/bench-storm.mjs).
#
# BENCH_ONLY=startup runs step 1 alone (and its storm), then prints the docs' table
# (scripts/bench-table.mjs, from dist/bench/*.json; `--write docs/benchmarks.md` places it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
command -v /usr/bin/time >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null; }
npm run build --silent

node scripts/bench-validate.mjs
STORM_PODS=100 STORM_CONDITIONS=idle STORM_BUILDS=snapshot node scripts/bench-storm.mjs
if [ "${BENCH_ONLY:-}" = startup ]; then
  node scripts/bench-table.mjs
  exit 0
fi
[ -f scripts/bench-rules.mjs ] && node $(cat dist/snapshot/node-flags) scripts/bench-rules.mjs  # the heap cap the image runs with
# Hostile rules (issue #43): validate in a 128 MiB memory cgroup, and a re-check sweep beside them.
node scripts/bench-hostile.mjs
# cni-check on 50 files: the audit itself, the VERSION queries, the CLI (needs the CNI plugins).
bash scripts/ensure-containerd.sh
node scripts/bench-cni.mjs
node scripts/bench-node.mjs
node scripts/bench-webhook.mjs
if [ "${BENCH_SKIP_IMAGE:-}" != 1 ]; then
  bash scripts/ensure-docker.sh
  npm run image --silent -- --base "${INTERLOCK_BASE:-local}"
  node scripts/bench-image.mjs
  node scripts/bench-image-size.mjs "${INTERLOCK_IMAGE:-mesh-interlock:dev}"
  INTERLOCK_IMAGE=${INTERLOCK_IMAGE:-mesh-interlock:dev} node scripts/bench-cri.mjs
  INTERLOCK_IMAGE=${INTERLOCK_IMAGE:-mesh-interlock:dev} node scripts/bench-recheck.mjs
  STORM_IMAGE=${IMAGE:-mesh-interlock:dev} node scripts/bench-storm.mjs
else
  node scripts/bench-storm.mjs
fi
node scripts/bench-table.mjs
