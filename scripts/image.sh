#!/usr/bin/env bash
# Builds the Interlock image as mesh-interlock:dev (override with IMAGE=...), then prints its size
# beside the base it was built from, failing above the budget (120 MB for the whole image).
# `npm run image -- --help` lists the options; scripts/image-plan.mjs makes the plan (which base,
# which platforms, which command line) and this script runs it:
#   --base official  (default) node:20-bookworm-slim, pulled when missing: a failed or timed-out
#                    pull stops the build and names --base local; nothing falls back silently;
#   --base local     mesh-interlock-base:local, made by scripts/ensure-docker.sh without any
#                    registry (what this repository's tests and CI use);
#   --platform/--push  buildx for another platform or several (a multi-arch manifest list).
set -euo pipefail

cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-mesh-interlock:dev}
export IMAGE
# The whole image: it is built FROM scratch with only what runs, so the base is only compared.
BUDGET_MB=${INTERLOCK_IMAGE_BUDGET_MB:-120}

log() { printf 'image: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Wrong options and --help are answered before any engine is started.
usage=$(node scripts/image-plan.mjs --check "$@") || exit $?
if [ -n "$usage" ]; then printf '%s\n' "$usage"; exit 0; fi

# As `npm test` does, the build installs what it needs: a fresh machine has no engine. The local
# base is made only when the plan asks for it (below).
docker info >/dev/null 2>&1 || bash scripts/ensure-docker.sh --engine-only || die "no Docker engine, and scripts/ensure-docker.sh could not start one (it must run as root)"

work=$(mktemp -d "${TMPDIR:-/tmp}/interlock-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
context=$work/context
plan=$(node scripts/image-plan.mjs --shell "$context" "$@") || exit $?
eval "$plan"
log "plan: FROM $base ($base_kind), $platforms, ${build_cmd[*]:0:3}"

if [ "$base_kind" = local ]; then
  docker image inspect "$base" >/dev/null 2>&1 || bash scripts/ensure-docker.sh
elif [ "$builder" = buildx ] || ! docker image inspect "$base" >/dev/null 2>&1; then
  # Asked of the registry before anything is built, bounded: an unreachable registry fails here,
  # in seconds, with the option that needs none.
  log "asking the registry for $base (at most ${pull_timeout} s)"
  timed_out=0
  probe_status=0
  timeout --kill-after=5 "$pull_timeout" "${probe_cmd[@]}" >/dev/null 2>"$work/probe.err" || probe_status=$?
  case $probe_status in 124 | 137) timed_out=1 ;; esac
  if [ "$probe_status" != 0 ]; then
    node scripts/image-plan.mjs --pull-failed "$base" "$pull_timeout" "$timed_out" "$(tail -n 3 "$work/probe.err")"
    exit 1
  fi
fi

[ -d node_modules ] || die "node_modules is missing; run npm ci first"
for f in src/snapshot/entry.ts scripts/build-snapshot.mjs scripts/cli-bundle.mjs scripts/build-info.mjs scripts/node-runtime-flags.json; do
  [ -f "$f" ] || die "$f is missing: the image ships the start-up snapshot built from it"
done

# Of node_modules, the context takes the production
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

# The context holds only what the build stage reads. The legacy builder reads it from standard
# input; buildx from a directory, with esbuild's binary for each other platform beside this one's.
context_files=(package.json package-lock.json tsconfig.json src scripts/build-snapshot.mjs scripts/cli-bundle.mjs
  scripts/build-info.mjs scripts/node-runtime-flags.json image/Dockerfile image/assemble.mjs image/launcher.mjs
  image/runtime-rootfs.sh "${deps[@]}")
make_context() { tar -c --owner=0 --group=0 --hard-dereference "${context_files[@]}"; }
if [ "$builder" = buildx ]; then
  mkdir -p "$context"
  make_context | tar -C "$context" -x
  esbuild_version=$(node -p 'require("./node_modules/esbuild/package.json").version')
  for pkg in "${esbuild_pkgs[@]}"; do
    [ -d "$context/node_modules/$pkg" ] && continue
    log "fetching $pkg@$esbuild_version (esbuild's binary for the build stage on that platform)"
    (cd "$work" && npm pack -q "$pkg@$esbuild_version" >/dev/null) || die "npm pack $pkg@$esbuild_version failed"
    mkdir -p "$context/node_modules/$pkg"
    tar -C "$context/node_modules/$pkg" --strip-components=1 -xzf "$work"/esbuild-*.tgz
    rm -f "$work"/esbuild-*.tgz
  done
fi

log "building $IMAGE on $base for $platforms"
start=$(date +%s)
build_log=$work/build.log
run_build() {
  if [ "$builder" = buildx ]; then env "${build_env[@]}" "${build_cmd[@]}"; else make_context | env "${build_env[@]}" "${build_cmd[@]}"; fi
}
if ! run_build >"$build_log" 2>&1; then
  tail -n 40 "$build_log" >&2
  die "docker build failed"
fi
grep -E '^assemble: ' "$build_log" >&2 || true
log "built in $(( $(date +%s) - start )) s"
if [ ${#push_cmd[@]} -gt 0 ]; then
  "${push_cmd[@]}" >&2 || die "docker push $IMAGE failed"
fi
if [ "$builder" = buildx ] && [[ " ${build_cmd[*]} " == *" --push "* ]]; then
  log "pushed $IMAGE for $platforms (a manifest list; not loaded into the local engine)"
  exit 0
fi

image_bytes=$(docker image inspect -f '{{.Size}}' "$IMAGE")
base_bytes=$(docker image inspect -f '{{.Size}}' "$base" 2>/dev/null || echo 0)
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

echo "image $IMAGE: $(mb "$image_bytes") (budget ${BUDGET_MB} MB; the base it was built from, $base: $(mb "$base_bytes")), in these layers:"
docker history --no-trunc --format '{{.Size}}\t{{.CreatedBy}}' "$IMAGE" |
  awk -F'\t' '$1 != "0B" { cmd = $2; gsub(/[ \t]+/, " ", cmd); printf "  %8s  %s\n", $1, substr(cmd, 1, 90) }'

[ "$image_bytes" -le $(( BUDGET_MB * 1000000 )) ] || die "the image is $(mb "$image_bytes"), over the ${BUDGET_MB} MB budget"
