// The build plan of `npm run image` (scripts/image.sh): which base, which platforms, which
// command line. The plan is a pure function of the options and the machine's facts, so that what
// an operator gets is tested without building anything; scripts/image.sh runs what it says.
//
//   node scripts/image-plan.mjs --help              the usage of `npm run image`
//   node scripts/image-plan.mjs --check ARGS...     exits 64 with a sentence when ARGS are wrong;
//                                                   prints the usage when they ask for it
//   node scripts/image-plan.mjs --shell CTX ARGS... the plan as shell assignments (image.sh evals it)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The official base: Debian bookworm with Node 20, from Docker Hub, for amd64 and arm64. */
export const OFFICIAL_BASE = 'node:20-bookworm-slim';
/** What --push builds when --platform is not given. */
export const PUSH_PLATFORMS = ['linux/amd64', 'linux/arm64'];
/** How long a pull of the base may take before the build stops (seconds). */
const DEFAULT_PULL_TIMEOUT = 180;

/** A wrong option or an impossible combination: the sentence says which and what to do. */
export class ImagePlanError extends Error {
  name = 'ImagePlanError';
}

export const USAGE = `Usage: npm run image [-- OPTIONS]   (scripts/image.sh)

Builds Interlock's image IMAGE (default mesh-interlock:dev):
IMAGE=REGISTRY/mesh-interlock:TAG npm run image -- --push

  --base official   the default: FROM ${OFFICIAL_BASE}, pulled from
                    Docker Hub when not present (a failed pull stops the
                    build; nothing falls back)
  --base local      without a registry (air-gapped, CI): FROM
                    mesh-interlock-base:local, made by scripts/ensure-docker.sh
                    (debootstrap from your Debian mirror plus this machine's
                    node; root; this machine's platform only)
  --base REF        FROM another Debian (glibc) image with Node 20+ on PATH
  --platform P[,P]  linux/amd64, linux/arm64 (default: this machine's; with
                    --push: both). Another machine's platform needs buildx.
  --push            push IMAGE to its registry (docker push; with buildx,
                    buildx build --push: one multi-arch manifest list)
  --help            this text

Environment: INTERLOCK_BASE (as --base), INTERLOCK_PULL_TIMEOUT (seconds a
pull may take, default ${DEFAULT_PULL_TIMEOUT}), INTERLOCK_IMAGE_BUDGET_MB (size budget,
default 120 MB).
`;

const KNOWN_PLATFORMS = new Set(PUSH_PLATFORMS);

function optionValue(argv, index, name) {
  const word = argv[index];
  if (word.includes('=')) return { value: word.slice(word.indexOf('=') + 1), next: index };
  const value = argv[index + 1];
  if (value === undefined || value.startsWith('--')) throw new ImagePlanError(`${name} needs a value`);
  return { value, next: index + 1 };
}

/** The options of `npm run image`: flags first, then INTERLOCK_BASE (INTERLOCK_BASE_IMAGE: older name of a REF). */
export function parseImageArgs(argv, env) {
  let base = env.INTERLOCK_BASE || env.INTERLOCK_BASE_IMAGE || 'official';
  let platforms;
  let push = false;
  let help = false;
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index];
    const name = word.split('=')[0];
    if (name === '--help' || name === '-h') help = true;
    else if (name === '--push') push = true;
    else if (name === '--base') ({ value: base, next: index } = optionValue(argv, index, name));
    else if (name === '--platform') {
      const read = optionValue(argv, index, name);
      index = read.next;
      platforms = read.value.split(',').filter((entry) => entry !== '');
      const unknown = platforms.filter((entry) => !KNOWN_PLATFORMS.has(entry));
      if (platforms.length === 0 || unknown.length > 0)
        throw new ImagePlanError(
          `--platform ${read.value}: expected linux/amd64, linux/arm64 or both, comma-separated`,
        );
    } else throw new ImagePlanError(`unknown option ${word} (npm run image -- --help)`);
  }
  if (base === '') throw new ImagePlanError('--base needs a value: official, local or an image reference');
  return { base, platforms: platforms ? [...new Set(platforms)] : undefined, push, help };
}

/** The base image and where it comes from. */
function chooseBase(option, localBase) {
  if (option === 'official') return { base: OFFICIAL_BASE, kind: 'official' };
  if (option === 'local') return { base: localBase, kind: 'local' };
  return { base: option, kind: 'custom' };
}

function choosePlatforms(options, facts, kind) {
  if (options.platforms) return options.platforms;
  if (!options.push || kind === 'local') return [facts.hostPlatform];
  if (!facts.buildx)
    throw new ImagePlanError(
      `docker buildx is not available, so --push cannot build the multi-arch image (${PUSH_PLATFORMS.join(', ')}): install the buildx plugin (Debian: docker-buildx), or push this machine's platform only with --platform ${facts.hostPlatform} --push`,
    );
  return PUSH_PLATFORMS;
}

function checkPlatforms(platforms, options, facts, kind) {
  const foreign = platforms.filter((entry) => entry !== facts.hostPlatform);
  if (kind === 'local' && foreign.length > 0)
    throw new ImagePlanError(
      `--base local is made from this machine's node binary (${facts.hostPlatform}): it cannot build ${foreign.join(', ')}; use the official base with a registry (--base official)`,
    );
  if (platforms.length > 1 && !options.push)
    throw new ImagePlanError(
      `${platforms.join(', ')}: an image for several platforms cannot be loaded into the local engine; add --push (buildx pushes one manifest list to IMAGE's registry)`,
    );
  if (foreign.length > 0 && !facts.buildx)
    throw new ImagePlanError(
      `docker buildx is not available: building for ${foreign.join(', ')} on this ${facts.hostPlatform} machine needs it (install the buildx plugin, Debian: docker-buildx), or build on a ${foreign[0]} machine`,
    );
  return foreign;
}

/**
 * The plan: `probe` asks the registry for the base before anything is built (bounded by
 * `pullTimeout` seconds), `build` is the command line, `push` what pushes afterwards.
 * facts: { image, hostPlatform, buildx, localBase, context, buildArgs: [name, value][], pullTimeout }.
 */
export function imagePlan(options, facts) {
  const { base, kind } = chooseBase(options.base, facts.localBase);
  const platforms = choosePlatforms(options, facts, kind);
  const foreign = checkPlatforms(platforms, options, facts, kind);
  const buildArgs = [['BASE_IMAGE', base], ...facts.buildArgs].flatMap(([name, value]) => [
    '--build-arg',
    `${name}=${value}`,
  ]);
  const useBuildx = foreign.length > 0 || platforms.length > 1;
  const common = [
    '-f',
    useBuildx ? path.join(facts.context, 'image/Dockerfile') : 'image/Dockerfile',
    '-t',
    facts.image,
  ];
  const build = useBuildx
    ? [
        'docker',
        'buildx',
        'build',
        '--platform',
        platforms.join(','),
        options.push ? '--push' : '--load',
        ...common,
        ...buildArgs,
        facts.context,
      ]
    : ['docker', 'build', ...common, ...buildArgs, '-'];
  const probe =
    kind === 'local'
      ? []
      : useBuildx
        ? ['docker', 'buildx', 'imagetools', 'inspect', base]
        : ['docker', 'pull', '-q', base];
  return {
    base,
    kind,
    platforms,
    builder: useBuildx ? 'buildx' : 'docker',
    // The legacy builder for this machine's platform: BuildKit's Dockerfile frontend is itself
    // an image, which a machine without a registry cannot pull.
    env: useBuildx ? {} : { DOCKER_BUILDKIT: '0' },
    probe,
    pullTimeout: facts.pullTimeout,
    build,
    push: options.push && !useBuildx ? ['docker', 'push', facts.image] : [],
    esbuild: foreign.map((platform) => `@esbuild/linux-${platform === 'linux/amd64' ? 'x64' : 'arm64'}`),
  };
}

/** What a failed or timed-out pull of the base says: the cause, and the option that needs no registry. */
export function pullFailedMessage(base, seconds, detail, timedOut) {
  const cause = timedOut
    ? `no answer within ${seconds} s (INTERLOCK_PULL_TIMEOUT)`
    : detail.trim() || 'docker gave no reason';
  return (
    `could not pull the base ${base}: ${cause}.\n` +
    `Without a registry, build on a local base instead: npm run image -- --base local ` +
    `(or INTERLOCK_BASE=local), which needs root and a Debian bookworm apt mirror ` +
    `(scripts/ensure-docker.sh makes mesh-interlock-base:local from it and this machine's node).`
  );
}

/** A word quoted for a POSIX shell. */
function quote(word) {
  return `'${String(word).replaceAll("'", `'\\''`)}'`;
}

/** The plan as bash assignments: scalars and arrays. */
function planShell(plan) {
  const array = (name, words) => `${name}=(${words.map(quote).join(' ')})`;
  return [
    `base=${quote(plan.base)}`,
    `base_kind=${quote(plan.kind)}`,
    `builder=${quote(plan.builder)}`,
    `platforms=${quote(plan.platforms.join(','))}`,
    `pull_timeout=${quote(plan.pullTimeout)}`,
    array(
      'build_env',
      Object.entries(plan.env).map(([name, value]) => `${name}=${value}`),
    ),
    array('probe_cmd', plan.probe),
    array('build_cmd', plan.build),
    array('push_cmd', plan.push),
    array('esbuild_pkgs', plan.esbuild),
    '',
  ].join('\n');
}

function hostPlatform() {
  return process.arch === 'arm64' ? 'linux/arm64' : 'linux/amd64';
}

function hasBuildx() {
  try {
    execFileSync('docker', ['buildx', 'version'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

function git(root, args, fallback) {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return fallback;
  }
}

/** The labels and `interlock version`'s facts, from package.json and git. */
function buildArgsOf(root) {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const repository = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  return [
    ['VERSION', pkg.version],
    ['REVISION', git(root, ['rev-parse', '--short=12', 'HEAD'], 'unknown')],
    ['INTERLOCK_COMMIT', git(root, ['rev-parse', 'HEAD'], 'unknown')],
    ['INTERLOCK_BUILD_DATE', new Date().toISOString().replace(/\.\d+Z$/, 'Z')],
    ['SOURCE_URL', repository ? repository.replace(/^git\+/, '') : 'https://www.npmjs.com/package/mesh-interlock'],
  ];
}

function pullTimeoutOf(env) {
  const raw = env.INTERLOCK_PULL_TIMEOUT ?? String(DEFAULT_PULL_TIMEOUT);
  if (!/^[1-9]\d*$/.test(raw)) throw new ImagePlanError(`INTERLOCK_PULL_TIMEOUT=${raw}: expected whole seconds`);
  return Number(raw);
}

function main(argv) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const [mode, ...rest] = argv;
  if (mode === '--pull-failed') {
    const [base, seconds, timedOut, detail = ''] = rest;
    process.stderr.write(`image: error: ${pullFailedMessage(base, seconds, detail, timedOut === '1')}\n`);
    return 1;
  }
  const context = mode === '--shell' ? rest.shift() : '';
  const options = parseImageArgs(rest, process.env);
  if (options.help || mode === '--help') {
    if (mode === '--shell') throw new ImagePlanError('--help: run it alone');
    process.stdout.write(USAGE);
    return 0;
  }
  const facts = {
    image: process.env.IMAGE || 'mesh-interlock:dev',
    hostPlatform: hostPlatform(),
    buildx: true,
    localBase: process.env.INTERLOCK_LOCAL_BASE || 'mesh-interlock-base:local',
    context,
    buildArgs: [],
    pullTimeout: pullTimeoutOf(process.env),
  };
  // --check: what the options cannot do on any machine, before an engine is started.
  if (mode !== '--shell') return (imagePlan(options, facts), 0);
  const plan = imagePlan(options, { ...facts, buildx: hasBuildx(), buildArgs: buildArgsOf(root) });
  process.stdout.write(planShell(plan));
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof ImagePlanError)) throw error;
    process.stderr.write(`image: error: ${error.message}\n`);
    process.exitCode = 64;
  }
}
