// Benchmark of `interlock node` against the Kubernetes API stand-in (test/harness/kube-api),
// bundled here with esbuild. Prints figures beside a baseline measured in the same run (an idle
// `node` process); asserts nothing. Everything listens on 127.0.0.1.
//   1. reaction: a pod's status update to the agent's Event, median and p90 over BENCH_NODE_SAMPLES;
//   2. footprint: 110 pods on the node, 5,000 in the cluster: peak RSS (VmHWM) and idle CPU;
//   3. storm: 50 pods blocked at once: deletes before the breaker opens, time to the Node Event.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '..');
const samples = Number(process.env.BENCH_NODE_SAMPLES ?? 20);
const tmp = mkdtempSync(join(tmpdir(), 'interlock-bench-node-'));
process.env.INTERLOCK_KUBE_FIXTURES = join(root, 'test/fixtures/kube/');
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p90 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)];

async function loadStandIn() {
  const outfile = join(tmp, 'stand-in.mjs');
  await build({
    stdin: {
      contents: "export * from './server.ts'; export * from './pods.ts'; export * from './kubeconfig.ts';",
      resolveDir: join(root, 'test/harness/kube-api'),
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'error',
  });
  return import(pathToFileURL(outfile).href);
}

function procStatus(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { hwmMiB: kib('VmHWM') / 1024, rssMiB: kib('VmRSS') / 1024, cpuTicks: Number(stat[11]) + Number(stat[12]) };
}

async function waitFor(what, check, limitMs = 30_000) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`bench-node: gave up waiting for ${what}`);
    await sleep(5);
  }
}

function startAgent(standIn, url, args) {
  const kubeconfig = standIn.writeKubeconfig(join(tmp, `kubeconfig-${Date.now()}`), url);
  const child = spawn(
    process.execPath,
    [
      join(root, 'dist/cli/main.js'),
      'node',
      '--node-name',
      'node-a',
      '--mesh',
      'linkerd',
      '--listen',
      '127.0.0.1:0',
      '--log-level',
      'warn',
      ...args,
    ],
    { env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig }, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return child;
}

async function populate(standIn, api, onNode, total) {
  for (let i = 0; i < total; i++) {
    const node = i < onNode ? 'node-a' : `node-${1 + (i % 49)}x`;
    api.store.put(
      'pods',
      standIn.healthyPod({ name: `app-${String(i).padStart(4, '0')}`, nodeName: node, ownerUid: `owner-${i}` }),
    );
  }
}

function blockPod(standIn, api, name, ownerUid) {
  const current = api.store.get('pods', 'default', name);
  const blocked = standIn.crashLoopPod({ name, ownerUid });
  blocked.metadata.uid = current.metadata.uid;
  api.store.put('pods', blocked);
}

async function reactionAndFootprint(standIn) {
  const api = await standIn.startKubeApi({ bookmarkMs: 60_000 });
  api.store.put('nodes', standIn.nodeObject('node-a'));
  await populate(standIn, api, 110, 5000);
  const agent = startAgent(standIn, api.url, ['--breaker-threshold', '1000', '--max-recreations', '1000']);
  await waitFor('the agent to watch', () => api.arrivals.includes('GET /api/v1/pods watch'));
  await sleep(2000);
  const before = procStatus(agent.pid);
  await sleep(10_000);
  const after = procStatus(agent.pid);
  const idleCpu = ((after.cpuTicks - before.cpuTicks) / 100 / 10) * 100;
  const seen = new Map();
  api.store.subscribe((change) => {
    if (change.resource === 'events' && change.type === 'ADDED')
      seen.set(change.object.involvedObject.name, performance.now());
  });
  const reactions = [];
  for (let i = 0; i < samples; i++) {
    const name = `app-${String(i).padStart(4, '0')}`;
    const started = performance.now();
    blockPod(standIn, api, name, `owner-${i}`);
    const at = await waitFor(`the Event on ${name}`, () => seen.get(name));
    reactions.push(at - started);
    await sleep(500);
  }
  const peak = procStatus(agent.pid);
  agent.kill('SIGTERM');
  await new Promise((done) => agent.on('exit', done));
  await api.close();
  return {
    reactions,
    idleCpu,
    peakMiB: peak.hwmMiB,
    idleRssMiB: after.rssMiB,
    podsOnNode: 110,
    podsInCluster: api.store.list('pods').length + samples,
  };
}

async function storm(standIn, gapMs) {
  const api = await standIn.startKubeApi({ bookmarkMs: 60_000 });
  api.store.put('nodes', standIn.nodeObject('node-a'));
  await populate(standIn, api, 50, 50);
  const agent = startAgent(standIn, api.url, []);
  await waitFor('the agent to watch', () => api.arrivals.includes('GET /api/v1/pods watch'));
  await sleep(500);
  let nodeEventAt;
  api.store.subscribe((change) => {
    if (change.resource === 'events' && change.object.reason === 'InterlockBreakerOpen')
      nodeEventAt ??= performance.now();
  });
  const started = performance.now();
  for (let i = 0; i < 50; i++) {
    blockPod(standIn, api, `app-${String(i).padStart(4, '0')}`, `owner-${i}`);
    if (gapMs > 0) await sleep(gapMs);
  }
  await waitFor('the Node Event', () => nodeEventAt);
  const openedWall =
    api.requests.find((request) => request.method === 'POST' && request.body?.reason === 'InterlockBreakerOpen')?.at ??
    Date.now();
  await sleep(3000);
  const deletes = api.requests.filter((request) => request.method === 'DELETE');
  agent.kill('SIGTERM');
  await new Promise((done) => agent.on('exit', done));
  await api.close();
  return {
    toNodeEventMs: nodeEventAt - started,
    deletesBeforeOpen: deletes.filter((request) => request.at <= openedWall).length,
    deletesAfter3s: deletes.length,
  };
}

/** RSS of a fresh node process after importing `specifiers` (nothing else), in MiB. */
async function importRss(specifiers) {
  const code = `${specifiers.map((specifier) => `await import(${JSON.stringify(specifier)});`).join('')} globalThis.gc?.(); console.log(process.memoryUsage().rss)`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
  });
  await new Promise((done) => child.on('exit', done));
  return Number(out.trim()) / 1024 / 1024;
}

async function baselineRss() {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  await sleep(1500);
  const { hwmMiB } = procStatus(child.pid);
  child.kill();
  return hwmMiB;
}

try {
  const standIn = await loadStandIn();
  const baseline = await baselineRss();
  const footprint = await reactionAndFootprint(standIn);
  const bare = await importRss([]);
  const kubeClient = await importRss([
    pathToFileURL(join(root, 'dist/kube/watch-pods.js')).href,
    pathToFileURL(join(root, 'dist/kube/nodes-taint.js')).href,
  ]);
  const prom = await importRss(['prom-client']);
  const pinoRss = await importRss(['pino']);
  const stormed = await storm(standIn, 0);
  const staggered = await storm(standIn, 20);
  const ms = (value) => `${value.toFixed(1)} ms`;
  console.log('interlock node (against the API stand-in)');
  console.log(
    `  reaction, status update -> Event (${samples} samples): median ${ms(median(footprint.reactions))}, p90 ${ms(p90(footprint.reactions))}   [target: median <= 1000 ms]`,
  );
  console.log(
    `  footprint, ${footprint.podsOnNode} pods on the node, ${footprint.podsInCluster} in the cluster: peak RSS ${footprint.peakMiB.toFixed(1)} MiB (idle node process: ${baseline.toFixed(1)} MiB, +${(footprint.peakMiB - baseline).toFixed(1)} MiB)   [target: <= 96 MiB]`,
  );
  console.log(
    `  module cost (RSS after import, fresh process): none ${bare.toFixed(1)} MiB; Kubernetes client (src/kube, node:http) +${(kubeClient - bare).toFixed(1)} MiB; prom-client +${(prom - bare).toFixed(1)} MiB; pino +${(pinoRss - bare).toFixed(1)} MiB`,
  );
  console.log(
    `  idle: RSS ${footprint.idleRssMiB.toFixed(1)} MiB, CPU ${footprint.idleCpu.toFixed(2)} % of one core over 10 s`,
  );
  console.log(
    `  storm, 50 pods blocked at once (breaker N=5): ${stormed.deletesBeforeOpen} deletes before the breaker opened, ${stormed.deletesAfter3s} after 3 s; Node Event after ${ms(stormed.toNodeEventMs)}   [target: <= 5 deletes, <= 2000 ms]`,
  );
  console.log(
    `  storm, 50 pods blocked 20 ms apart: ${staggered.deletesBeforeOpen} deletes before the breaker opened, ${staggered.deletesAfter3s} after 3 s; Node Event after ${ms(staggered.toNodeEventMs)}`,
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
