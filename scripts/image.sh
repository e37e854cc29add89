#!/usr/bin/env bash
# Builds the Interlock image as mesh-interlock:dev (override with IMAGE=...), then prints its size
# beside the base it was built from, failing above the budget (120 MB for the whole image).
#
# Base image, in order of preference:
#   1. INTERLOCK_BASE_IMAGE, if set;
#   2. the public node:20-bookworm-slim, if present locally (or pulled, with INTERLOCK_PULL_BASE=1);
#   3. otherwise mesh-interlock-base:local (Debian + Node, made by scripts/ensure-docker.sh).
set -euo pipefail

cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-mesh-interlock:dev}
PUBLIC_BASE=node:20-bookworm-slim
LOCAL_BASE=${INTERLOCK_LOCAL_BASE:-mesh-interlock-base:local}
# The whole image: it is built FROM scratch with only what runs, so the base is only compared.
BUDGET_MB=${INTERLOCK_IMAGE_BUDGET_MB:-120}

log() { printf 'image: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# As `npm test` does, the build installs what it needs: a fresh machine has no engine.
docker info >/dev/null 2>&1 || bash scripts/ensure-docker.sh || die "no Docker engine, and scripts/ensure-docker.sh could not start one (it must run as root)"

if [ -n "${INTERLOCK_BASE_IMAGE:-}" ]; then
  base=$INTERLOCK_BASE_IMAGE
  docker image inspect "$base" >/dev/null 2>&1 || docker pull -q "$base" >/dev/null
elif docker image inspect "$PUBLIC_BASE" >/dev/null 2>&1; then
  base=$PUBLIC_BASE
elif [ "${INTERLOCK_PULL_BASE:-}" = 1 ] && timeout 120 docker pull -q "$PUBLIC_BASE" >/dev/null 2>&1; then
  # Pulling is opt-in: the test command must send nothing off the machine, and here it would
  # only wait for a registry that cannot be reached.
  base=$PUBLIC_BASE
else
  log "$PUBLIC_BASE is not present (INTERLOCK_PULL_BASE=1 pulls it); using $LOCAL_BASE"
  if ! docker image inspect "$LOCAL_BASE" >/dev/null 2>&1; then
    bash scripts/ensure-docker.sh
  fi
  base=$LOCAL_BASE
fi

[ -d node_modules ] || die "node_modules is missing; run npm ci first"
for f in src/snapshot/entry.ts scripts/build-snapshot.mjs scripts/cli-bundle.mjs scripts/build-info.mjs scripts/node-runtime-flags.json; do
  [ -f "$f" ] || die "$f is missing: the image ships the start-up snapshot built from it"
done

# The context holds only what the build stage reads. Of node_modules: the production
# dependency tree (what the snapshot is made of) plus esbuild and its binary for this platform.
esbuild_platform="@esbuild/$(node -p 'process.platform + "-" + process.arch')"
# Nested packages are dropped from the list: their parent directory already carries them, and
# naming a file twice would make tar store it as a hard link to itself.
mapfile -t deps < <(npm ls --omit=dev --all --parseable 2>/dev/null | sed -n "s|^$PWD/||p" | grep '^node_modules/' |
  sort -u | awk '{ for (i = 1; i <= n; i++) if (index($0, kept[i] "/") == 1) next; kept[++n] = $0; print }')
[ ${#deps[@]} -gt 0 ] || die "npm ls found no production dependencies"
for d in node_modules/esbuild "node_modules/$esbuild_platform"; do
  [ -d "$d" ] || die "$d is missing (esbuild is a devDependency; run npm ci)"
  deps+=("$d")
done

version=$(node -p 'require("./package.json").version')
revision=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
source_url=$(node -p '(r => (typeof r === "string" ? r : r?.url) ?? "")(require("./package.json").repository)' | sed 's|^git+||')
[ -n "$source_url" ] || source_url=https://www.npmjs.com/package/mesh-interlock

log "building $IMAGE on $base"
start=$(date +%s)
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
# The legacy builder is asked for explicitly: BuildKit's Dockerfile frontend may not be
# available offline, and behaviour should not depend on whether buildx is installed.
if ! tar -c --owner=0 --group=0 --hard-dereference \
    package.json package-lock.json tsconfig.json src scripts/build-snapshot.mjs scripts/cli-bundle.mjs scripts/build-info.mjs scripts/node-runtime-flags.json image/Dockerfile image/assemble.mjs image/launcher.mjs image/runtime-rootfs.sh "${deps[@]}" |
  DOCKER_BUILDKIT=0 docker build -f image/Dockerfile -t "$IMAGE" \
    --build-arg "BASE_IMAGE=$base" \
    --build-arg "VERSION=$version" \
    --build-arg "REVISION=$revision" \
    --build-arg "INTERLOCK_COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    --build-arg "INTERLOCK_BUILD_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --build-arg "SOURCE_URL=$source_url" \
    - >"$build_log" 2>&1; then
  tail -n 40 "$build_log" >&2
  die "docker build failed"
fi
grep -E '^assemble: ' "$build_log" >&2 || true
log "built in $(( $(date +%s) - start )) s"

image_bytes=$(docker image inspect -f '{{.Size}}' "$IMAGE")
base_bytes=$(docker image inspect -f '{{.Size}}' "$base")
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

echo "image $IMAGE: $(mb "$image_bytes") (budget ${BUDGET_MB} MB; the base it was built from, $base: $(mb "$base_bytes")), in these layers:"
docker history --no-trunc --format '{{.Size}}\t{{.CreatedBy}}' "$IMAGE" |
  awk -F'\t' '$1 != "0B" { cmd = $2; gsub(/[ \t]+/, " ", cmd); printf "  %8s  %s\n", $1, substr(cmd, 1, 90) }'

[ "$image_bytes" -le $(( BUDGET_MB * 1000000 )) ] || die "the image is $(mb "$image_bytes"), over the ${BUDGET_MB} MB budget"
