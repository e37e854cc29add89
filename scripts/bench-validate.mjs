// `npm run bench`'s start-up step (issue #37): a passing `interlock validate` from the start-up
// snapshot, beside `node -e 0` and the floor, all measured the same way in the same run, where the
// validator runs: a pod namespace routed into a sink, uid 65534, no capabilities, the bare
// environment a container gets (`env -i PATH=/usr/bin:/bin`), runs interleaved so that drift on the
// machine hits every side alike. The floor is what any user-land snapshot costs: an empty one, and
// one holding only the built-ins validate loads (listed by running validate once from a copy of
// the blob that records them). Prints median wall, mean CPU, peak RSS and ratios with the target,
// and writes them as JSON for scripts/bench-table.mjs. Asserts nothing; no packet leaves the
// namespaces it makes.
//   BENCH_RUNS=21              interleaved runs of each side
//   BENCH_INHERITED_ENV=1      also every side in the environment the bench inherits
//   BENCH_RESULTS=dist/bench   where startup.json goes
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadAverage, machine } from './bench-machine.mjs';
import { stageRuntime } from './stage-runtime.mjs';

const root = resolve(import.meta.dirname, '..');
const runs = Number(process.env.BENCH_RUNS ?? 21);
const results = resolve(root, process.env.BENCH_RESULTS ?? 'dist/bench');
const TARGET = 1.5;
const pod = `ilbench${process.pid}`;
const sink = `ilbenchs${process.pid}`;
// Istio ambient's pod: istio-cni's rules (its HEAD golden) and the ztunnel stand-in listening in it.
const ambientPod = `ilbencha${process.pid}`;
const AMBIENT_FIXTURES = resolve(root, 'test/fixtures/meshes/istio-ambient');
let ztunnel;
const tmp = mkdtempSync(join(tmpdir(), 'interlock-bench-'));
chmodSync(tmp, 0o777);
// uid 65534 cannot read a checkout in a 0700 directory: it runs a world-readable copy of the build.
const stage = stageRuntime();
const snapshotDir = join(stage, 'dist/snapshot');
const runtimeFlags = readFileSync(join(snapshotDir, 'node-flags'), 'utf8').trim().split(/\s+/);
const POD_ENV = { PATH: '/usr/bin:/bin' };
const sh = (...args) => execFileSync(args[0], args.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });

/** The node flags of the npm bin's shebang (its code cache is only taken under them). */
function binShebangFlags() {
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
  setUpAmbient();
}

/** A second pod on the same sink, enrolled in ambient: the golden's IPv4 tables, the ip rule, ztunnel's ports. */
function setUpAmbient() {
  sh('ip', 'netns', 'add', ambientPod);
  sh('ip', 'link', 'add', 'ilbench-c', 'type', 'veth', 'peer', 'name', 'ilbench-d');
  sh('ip', 'link', 'set', 'ilbench-c', 'netns', ambientPod);
  sh('ip', 'link', 'set', 'ilbench-d', 'netns', sink);
  sh('ip', '-n', ambientPod, 'link', 'set', 'ilbench-c', 'name', 'eth0');
  sh('ip', '-n', ambientPod, 'link', 'set', 'lo', 'up');
  sh('ip', '-n', ambientPod, 'link', 'set', 'eth0', 'up');
  sh('ip', '-n', sink, 'link', 'set', 'ilbench-d', 'up');
  sh('ip', '-n', sink, 'addr', 'add', '10.250.10.1/24', 'dev', 'ilbench-d');
  sh('ip', '-n', ambientPod, 'addr', 'add', '10.250.10.2/24', 'dev', 'eth0');
  sh('ip', '-n', ambientPod, 'route', 'add', 'default', 'via', '10.250.10.1');
  const head = readdirSync(AMBIENT_FIXTURES).find((name) => name.startsWith('HEAD-'));
  const golden = readFileSync(join(AMBIENT_FIXTURES, head, 'iptables/default.golden'), 'utf8');
  const restore = golden
    .split('\n')
    .filter((line) => !/^ip6?tables-save$/.test(line))
    .join('\n');
  execFileSync('ip', ['netns', 'exec', ambientPod, 'iptables-nft-restore'], { input: `${restore}\n` });
  sh('ip', '-n', ambientPod, 'rule', 'add', 'fwmark', '0x111/0xfff', 'pref', '32764', 'lookup', '100');
  sh('ip', '-n', ambientPod, 'route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', '100');
  const standIn = resolve(root, 'test/harness/ztunnel-standin.py');
  ztunnel = spawn('ip', ['netns', 'exec', ambientPod, '/usr/bin/python3', standIn, '--lifetime', '3600'], {
    stdio: 'ignore',
  });
  for (let tries = 0; tries < 200; tries++) {
    if (execFileSync('ip', ['netns', 'exec', ambientPod, 'ss', '-Hltn', 'sport = :15008'], { encoding: 'utf8' }).trim())
      return;
    spawnSync('sleep', ['0.05']);
  }
  throw new Error('bench: the ztunnel stand-in did not listen');
}

function tearDown() {
  ztunnel?.kill('SIGKILL');
  for (const ns of [pod, sink, ambientPod]) {
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
function measure(command, env, netns = pod) {
  const timeFile = join(tmp, 'time');
  const started = process.hrtime.bigint();
  const result = spawnSync(
    'ip',
    [
      ...['netns', 'exec', netns, '/usr/bin/time', '-f', '%M %U %S', '-o', timeFile],
      ...['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all'],
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

/** Builds a blob from `entry` under the runtime flags (V8 takes a blob only under the flags that made it). */
function buildBlob(name, entry) {
  const source = join(tmp, `${name}.cjs`);
  writeFileSync(source, entry);
  const blob = join(snapshotDir, `${name}.blob`);
  const built = spawnSync(process.execPath, [...runtimeFlags, '--snapshot-blob', blob, '--build-snapshot', source], {
    cwd: snapshotDir,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`bench: building ${name}.blob failed: ${built.stderr}`);
  chmodSync(blob, 0o644);
  return blob;
}

const EMPTY_MAIN = "require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {});\n";

/**
 * The public built-ins a validate run has loaded by its exit, beyond what an empty snapshot
 * holds: from a copy of the shipped blob whose main also writes process.moduleLoadList at exit.
 */
function builtinsValidateLoads(args) {
  const list = join(tmp, 'modules.json');
  writeFileSync(list, '');
  chmodSync(list, 0o666);
  const recorder = buildBlob(
    'recorder',
    [
      "const { startupSnapshot } = require('node:v8');",
      'const set = startupSnapshot.setDeserializeMainFunction;',
      'startupSnapshot.setDeserializeMainFunction = (main, data) => set.call(startupSnapshot, (d) => {',
      `  process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(process.moduleLoadList)));`,
      '  main(d);',
      '}, data);',
      // A snapshot's entry can require built-ins only: the bundle itself follows.
      readFileSync(join(snapshotDir, 'interlock.snapshot.cjs'), 'utf8'),
    ].join('\n'),
  );
  measure([process.execPath, ...runtimeFlags, '--snapshot-blob', recorder, ...args], POD_ENV);
  const emptyList = join(tmp, 'empty-modules.json');
  const probe = buildBlob(
    'empty-recorder',
    `require('node:v8').startupSnapshot.setDeserializeMainFunction(() => require('node:fs').writeFileSync(${JSON.stringify(emptyList)}, JSON.stringify(process.moduleLoadList)));\n`,
  );
  writeFileSync(emptyList, '');
  chmodSync(emptyList, 0o666);
  measure([process.execPath, ...runtimeFlags, '--snapshot-blob', probe], POD_ENV);
  const before = new Set(JSON.parse(readFileSync(emptyList, 'utf8')));
  const loaded = JSON.parse(readFileSync(list, 'utf8')).filter((entry) => !before.has(entry));
  const publicNames = new Set(builtinModules);
  return loaded
    .filter((entry) => entry.startsWith('NativeModule '))
    .map((entry) => entry.slice('NativeModule '.length))
    .filter((name) => publicNames.has(name));
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
// /usr/bin/time prints CPU in 10 ms steps: the mean of many runs resolves what one cannot.
const mean = (values) => values.reduce((sum, v) => sum + v, 0) / values.length;

try {
  setUp();
  const args = [
    ...['validate', '--mesh', 'linkerd', '--timeout', '5s', '--log-level', 'warn'],
    ...['--termination-log', join(tmp, 'tl')],
  ];
  writeFileSync(join(tmp, 'tl'), '');
  chmodSync(join(tmp, 'tl'), 0o666);
  const snapshot = [process.execPath, ...runtimeFlags, '--snapshot-blob', join(snapshotDir, 'interlock.blob')];
  const builtins = builtinsValidateLoads(args);
  const emptyBlob = buildBlob('empty', EMPTY_MAIN);
  const builtinsBlob = buildBlob(
    'builtins',
    `${builtins.map((name) => `require(${JSON.stringify(`node:${name}`)});`).join('\n')}\n${EMPTY_MAIN}`,
  );
  const sides = {
    baseline: { label: 'node -e 0 (baseline)', command: [process.execPath, '-e', '0'] },
    snapshot: { label: 'validate, start-up snapshot (ships)', command: [...snapshot, ...args] },
    floorEmpty: {
      label: 'floor: empty user-land snapshot',
      command: [process.execPath, ...runtimeFlags, '--snapshot-blob', emptyBlob],
    },
    floorBuiltins: {
      label: "floor: snapshot of validate's built-ins",
      command: [process.execPath, ...runtimeFlags, '--snapshot-blob', builtinsBlob],
    },
    ambient: {
      label: 'validate --mesh istio-ambient, start-up snapshot',
      command: [...snapshot, ...args.map((arg) => (arg === 'linkerd' ? 'istio-ambient' : arg))],
      netns: ambientPod,
    },
    version: { label: 'version, start-up snapshot', command: [...snapshot, '--', 'version'] },
    bin: {
      label: 'validate, npm bin (dist/bin)',
      command: [process.execPath, ...binShebangFlags(), join(stage, 'dist/bin/interlock.cjs'), ...args],
    },
    modules: {
      label: 'validate, plain modules (dist/cli)',
      command: [process.execPath, join(stage, 'dist/cli/main.js'), ...args],
    },
  };
  const environments = { 'pod environment (env -i PATH=/usr/bin:/bin)': POD_ENV };
  // A variable like NODE_EXTRA_CA_CERTS, set on many build machines, costs every node process tens
  // of milliseconds at start-up and so flatters a ratio; a pod rarely has it. Only on request.
  if (process.env.BENCH_INHERITED_ENV === '1') environments['inherited environment'] = process.env;
  for (let i = 0; i < 2; i++)
    for (const env of Object.values(environments))
      for (const side of Object.values(sides)) measure(side.command, env, side.netns); // warm the page cache
  const loadBefore = loadAverage();
  const samples = Object.fromEntries(
    Object.keys(environments).map((env) => [env, Object.fromEntries(Object.keys(sides).map((name) => [name, []]))]),
  );
  for (let i = 0; i < runs; i++)
    for (const [envName, env] of Object.entries(environments))
      for (const [name, side] of Object.entries(sides))
        samples[envName][name].push(measure(side.command, env, side.netns));
  const loadAfter = loadAverage();
  const figures = (list) => ({
    wallMs: median(list.map((s) => s.wallMs)),
    cpuMs: mean(list.map((s) => s.cpuMs)),
    peakRssMiB: Math.max(...list.map((s) => s.rssKiB)) / 1024,
  });
  const report = { machine: machine(), runs, loadBefore, loadAfter, targetRatio: TARGET, builtins, environments: {} };
  console.log(
    `start-up benchmark: ${runs} interleaved runs of each side, in a pod namespace routed into a sink, uid 65534, no capabilities; load average before ${loadBefore}, after ${loadAfter}`,
  );
  console.log(
    `  built-ins validate loads beyond an empty snapshot (the second floor holds them): ${builtins.join(' ')}`,
  );
  for (const [envName, bySide] of Object.entries(samples)) {
    const rows = Object.fromEntries(Object.entries(bySide).map(([name, list]) => [name, figures(list)]));
    const base = rows.baseline;
    for (const row of Object.values(rows)) {
      row.wallRatio = row.wallMs / base.wallMs;
      row.cpuRatio = row.cpuMs / Math.max(base.cpuMs, 1);
    }
    report.environments[envName] = Object.fromEntries(
      Object.entries(rows).map(([name, row]) => [name, { label: sides[name].label, ...row }]),
    );
    console.log(`  ${envName}:`);
    for (const [name, row] of Object.entries(rows))
      console.log(
        `    ${sides[name].label.padEnd(42)} median wall ${row.wallMs.toFixed(1).padStart(6)} ms (${row.wallRatio.toFixed(2)}x)   mean CPU ${row.cpuMs.toFixed(1).padStart(6)} ms (${row.cpuRatio.toFixed(2)}x)   peak RSS ${row.peakRssMiB.toFixed(1).padStart(5)} MiB`,
      );
    const shipped = rows.snapshot.wallRatio;
    console.log(
      `    start-up ratio ${shipped.toFixed(2)}x node -e 0 (target <= ${TARGET}x: ${shipped <= TARGET ? 'met' : 'NOT met'}); floor ${rows.floorEmpty.wallRatio.toFixed(2)}x (empty snapshot), ${rows.floorBuiltins.wallRatio.toFixed(2)}x (its built-ins)`,
    );
  }
  mkdirSync(results, { recursive: true });
  writeFileSync(join(results, 'startup.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`  written to ${join(results, 'startup.json')}; \`node scripts/bench-table.mjs\` prints the docs table`);
} finally {
  tearDown();
}
