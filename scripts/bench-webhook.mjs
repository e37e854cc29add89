// Benchmark of `interlock webhook` (the start-up snapshot, as the image runs it): 1,000 admissions
// at 50 concurrent over TLS with kept-alive connections, as the API server sends them, built from
// the meshes' rendered pods (test/fixtures/meshes). Prints p50/p99 latency and the peak RSS beside
// a baseline measured in the same run: a bare Node https server that reads the body and answers a
// fixed AdmissionReview. Asserts nothing. Everything listens on 127.0.0.1.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { admissionReview, meshPods } from './mesh-pods.mjs';

const root = resolve(import.meta.dirname, '..');
const TOTAL = Number(process.env.BENCH_WEBHOOK_REQUESTS ?? 1000);
const CONCURRENCY = 50;
const tmp = mkdtempSync(join(tmpdir(), 'interlock-bench-webhook-'));

function makeCertificate() {
  const run = (args) => execFileSync('openssl', args, { cwd: tmp, stdio: 'pipe' });
  run(
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'tls.key'].concat([
      '-out',
      'tls.crt',
      '-days',
      '1',
      '-subj',
      '/CN=bench',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]),
  );
  return { cert: join(tmp, 'tls.crt'), key: join(tmp, 'tls.key'), ca: readFileSync(join(tmp, 'tls.crt')) };
}

/** The meshes' rendered pods as AdmissionReview bodies, given a request uid. */
function reviews() {
  return meshPods().map(
    ({ pod }) =>
      (uid) =>
        admissionReview(pod, uid),
  );
}

const BASELINE = `
import { createServer } from 'node:https';
import { readFileSync } from 'node:fs';
const server = createServer({ cert: readFileSync(process.argv[2]), key: readFileSync(process.argv[3]) }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const uid = JSON.parse(Buffer.concat(chunks).toString()).request.uid;
    const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'webhook listening', port: server.address().port })));
`;

function start(argv) {
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolvePort, reject) => {
    let pending = '';
    const onData = (chunk) => {
      pending += chunk.toString();
      const line = pending.split('\n').find((text) => text.includes('"msg":"webhook listening"'));
      const port = line && /"port":(\d+)/.exec(line)?.[1];
      if (!port) return;
      // From here on the logs are read and dropped, at no cost to the figures.
      child.stdout.off('data', onData);
      child.stdout.resume();
      resolvePort({ child, port: Number(port) });
    };
    child.stdout.on('data', onData);
    child.on('exit', (code) => reject(new Error(`exited ${code} before listening`)));
  });
}

function post(agent, port, ca, body) {
  return new Promise((done, fail) => {
    const started = performance.now();
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/mutate',
        method: 'POST',
        agent,
        ca,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => done({ ms: performance.now() - started, patched: text.includes('"patchType"') }));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

async function load(port, ca, bodies, concurrency = CONCURRENCY, total = TOTAL) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency, ca });
  const run = async (count, record) => {
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const index = next++;
        const result = await post(agent, port, ca, bodies[index % bodies.length](`bench-${index}`));
        record?.(result);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  };
  await run(100); // warm-up: TLS handshakes of the 50 connections, JIT
  const results = [];
  const started = performance.now();
  await run(total, (result) => results.push(result));
  const wall = performance.now() - started;
  agent.destroy();
  const sorted = results.map((r) => r.ms).sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
  return {
    p50: at(0.5),
    p99: at(0.99),
    max: sorted.at(-1),
    perSecond: (total / wall) * 1000,
    patched: results.filter((r) => r.patched).length,
  };
}

function peakRss(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024;
}

async function measure(name, argv, tls, bodies) {
  const { child, port } = await start(argv);
  const figures = await load(port, tls.ca, bodies);
  const rss = peakRss(child.pid);
  // At 50 concurrent a closed loop measures queueing (50 / throughput); one at a time, the service time.
  const alone = await load(port, tls.ca, bodies, 1, 200);
  child.kill('SIGTERM');
  await new Promise((done) => child.on('exit', done));
  return { name, ...figures, rss, alone };
}

const tls = makeCertificate();
const bodies = reviews();
writeFileSync(join(tmp, 'baseline.mjs'), BASELINE);
const flags = readFileSync(join(root, 'dist/snapshot/node-flags'), 'utf8').trim().split(/\s+/).filter(Boolean);
const interlock = [
  process.execPath,
  ...flags,
  '--snapshot-blob',
  join(root, 'dist/snapshot/interlock.blob'),
  'webhook',
  '--bind',
  '127.0.0.1:0',
  '--metrics-bind',
  '127.0.0.1:0',
  '--tls-cert',
  tls.cert,
  '--tls-key',
  tls.key,
  '--image',
  'registry.example/interlock:bench',
];
try {
  const rows = [
    await measure(
      'baseline: bare https server, fixed answer',
      [process.execPath, join(tmp, 'baseline.mjs'), tls.cert, tls.key],
      tls,
      bodies,
    ),
    await measure('interlock webhook', interlock, tls, bodies),
  ];
  console.log(
    `\nwebhook: ${TOTAL} admissions at ${CONCURRENCY} concurrent, TLS kept alive, ${bodies.length} mesh pods in turn (target p99 <= 10 ms, RSS <= 96 MiB)`,
  );
  console.log(
    '| server | p50 ms | p99 ms | max ms | admissions/s | patched | peak RSS MiB | one at a time: p50 / p99 ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.name} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(2)} | ${r.perSecond.toFixed(0)} | ${r.patched} | ${r.rss.toFixed(1)} | ${r.alone.p50.toFixed(2)} / ${r.alone.p99.toFixed(2)} |`,
    );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
