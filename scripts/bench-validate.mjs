// Benchmark of a passing `interlock validate` in a pod namespace, beside `node -e 0` measured in
// the same namespace, the same way, in the same run: median wall time and peak RSS, and ratios.
// Prints figures; asserts nothing. Every packet stays in the namespaces it makes.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stageRuntime } from './stage-runtime.mjs';

const root = resolve(import.meta.dirname, '..');
const runs = Number(process.env.BENCH_RUNS ?? 15);
const pod = `ilbench${process.pid}`;
const sink = `ilbenchs${process.pid}`;
const tmp = mkdtempSync(join(tmpdir(), 'interlock-bench-'));
chmodSync(tmp, 0o777);
// uid 65534 cannot read a checkout in a 0700 directory: it runs a world-readable copy of the build.
const stage = stageRuntime();
const sh = (...args) => execFileSync(args[0], args.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });

/** The node flags of the npm bin's shebang (its code cache is only taken under them). */
function binShebangFlags(stage) {
  const shebang = readFileSync(join(stage, 'dist/bin/interlock.cjs'), 'utf8').split('\n')[0];
  return shebang
    .replace(/^#!.*\bnode\b/, '')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
}
function setUp() {
  sh('ip', 'netns', 'add', pod);
  sh('ip', 'netns', 'add', sink);
  sh('ip', 'link', 'add', 'ilbench-a', 'type', 'veth', 'peer', 'name', 'ilbench-b');
  sh('ip', 'link', 'set', 'ilbench-a', 'netns', pod);
  sh('ip', 'link', 'set', 'ilbench-b', 'netns', sink);
  sh('ip', '-n', pod, 'link', 'set', 'ilbench-a', 'name', 'eth0');
  for (const [ns, dev] of [
    [pod, 'eth0'],
    [sink, 'ilbench-b'],
  ]) {
    sh('ip', '-n', ns, 'link', 'set', 'lo', 'up');
    sh('ip', '-n', ns, 'link', 'set', dev, 'up');
  }
  sh('ip', '-n', sink, 'addr', 'add', '10.250.9.1/24', 'dev', 'ilbench-b');
  sh('ip', '-n', pod, 'addr', 'add', '10.250.9.2/24', 'dev', 'eth0');
  sh('ip', '-n', pod, 'route', 'add', 'default', 'via', '10.250.9.1');
  const rules = resolve(root, 'test/fixtures/corpus/linkerd/cni-default/iptables-nft-save.v4.txt');
  execFileSync('ip', ['netns', 'exec', pod, 'iptables-nft-restore'], { input: readFileSync(rules) });
}

function tearDown() {
  for (const ns of [pod, sink]) {
    try {
      sh('ip', 'netns', 'del', ns);
    } catch {
      /* gone */
    }
  }
  rmSync(tmp, { recursive: true, force: true });
  rmSync(stage, { recursive: true, force: true });
}

/** One run as the validator runs in a pod: uid 65534, every capability dropped. */
function measure(command, env) {
  const timeFile = join(tmp, 'time');
  const started = process.hrtime.bigint();
  const result = spawnSync(
    'ip',
    [
      'netns',
      'exec',
      pod,
      '/usr/bin/time',
      '-f',
      '%M %U %S',
      '-o',
      timeFile,
      'setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      ...command,
    ],
    { cwd: stage, env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${command.join(' ')} exited ${result.status}: ${result.stderr}`);
  const [rss, user, system] = (readFileSync(timeFile, 'utf8').trim().split('\n').pop() ?? '').split(' ').map(Number);
  return { wallMs, rssKiB: rss, cpuMs: (user + system) * 1000 };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

try {
  setUp();
  const args = [
    'validate',
    '--mesh',
    'linkerd',
    '--timeout',
    '5s',
    '--log-level',
    'warn',
    '--termination-log',
    join(tmp, 'tl'),
  ];
  // What the image runs (the start-up snapshot) and, for reference, the plain tsc output.
  const commands = {
    baseline: [process.execPath, '-e', '0'],
    snapshot: [
      process.execPath,
      ...readFileSync(join(stage, 'dist/snapshot/node-flags'), 'utf8').trim().split(/\s+/),
      '--snapshot-blob',
      join(stage, 'dist/snapshot/interlock.blob'),
      ...args,
    ],
    modules: [process.execPath, join(stage, 'dist/cli/main.js'), ...args],
    // package.json's bin (scripts/build-bin.mjs) as npm runs it: with its shebang's heap cap.
    bin: [process.execPath, ...binShebangFlags(stage), join(stage, 'dist/bin/interlock.cjs'), ...args],
    // The snapshot's fixed cost alone: deserialising the blob, then the smallest command.
    version: [
      process.execPath,
      ...readFileSync(join(stage, 'dist/snapshot/node-flags'), 'utf8').trim().split(/\s+/),
      '--snapshot-blob',
      join(stage, 'dist/snapshot/interlock.blob'),
      '--',
      'version',
    ],
  };
  // Two environments: the one `npm run bench` inherits, and a container's (PATH only). A variable
  // like NODE_EXTRA_CA_CERTS, set on many build machines, costs every node process tens of
  // milliseconds at start-up and so flatters a ratio; a pod rarely has it.
  const environments = {
    'inherited environment': process.env,
    // `env -i PATH=/usr/bin:/bin`: what a container's process gets when its image sets nothing else.
    'pod environment (env -i PATH=/usr/bin:/bin)': { PATH: '/usr/bin:/bin' },
  };
  for (let i = 0; i < 2; i++)
    for (const env of Object.values(environments)) for (const command of Object.values(commands)) measure(command, env); // warm the page cache
  const samples = Object.fromEntries(
    Object.keys(environments).map((env) => [env, { baseline: [], snapshot: [], modules: [], bin: [], version: [] }]),
  );
  // Interleaved, so drift on the machine hits every side alike.
  for (let i = 0; i < runs; i++) {
    for (const [envName, env] of Object.entries(environments))
      for (const [name, command] of Object.entries(commands)) samples[envName][name].push(measure(command, env));
  }
  const row = (list) => ({
    wall: median(list.map((s) => s.wallMs)),
    cpu: median(list.map((s) => s.cpuMs)),
    rss: Math.max(...list.map((s) => s.rssKiB)) / 1024,
  });
  console.log(
    `validate benchmark: ${runs} interleaved runs each, a passing validate in a pod namespace, uid 65534, no capabilities`,
  );
  for (const [envName, sides] of Object.entries(samples)) {
    const base = row(sides.baseline);
    console.log(`  ${envName}:`);
    const line = (name, figures) =>
      console.log(
        `    ${name.padEnd(44)} median wall ${figures.wall.toFixed(1).padStart(7)} ms (${(figures.wall / base.wall).toFixed(2)}x)   CPU ${figures.cpu.toFixed(0).padStart(4)} ms (${(figures.cpu / Math.max(base.cpu, 1)).toFixed(2)}x)   peak RSS ${figures.rss.toFixed(1).padStart(6)} MiB`,
      );
    line('node -e 0 (baseline)', base);
    line('interlock validate, start-up snapshot (ships)', row(sides.snapshot));
    line('interlock validate, plain modules (dist/cli)', row(sides.modules));
    line('interlock validate, npm bin (dist/bin)', row(sides.bin));
    line('interlock version, start-up snapshot', row(sides.version));
  }
  console.log('  targets: shipped validate median wall <= 1.5x node -e 0 in the pod environment, peak RSS <= 64 MiB');
} finally {
  tearDown();
}
