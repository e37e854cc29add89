// `npm run bench`'s hostile-rules step (issue #43, items 4 and 5), printed, never asserted:
//   1. `interlock validate --mesh linkerd --rules required --timeout 5s` from the start-up snapshot,
//      uid 65534 with NET_ADMIN and NET_RAW, in a pod namespace routed into a sink, inside a memory
//      cgroup of 128 MiB (the limit `manifest --rules-check` prints; children and page cache are
//      charged there): Linkerd's corpus nat table with 20,000 scattered RETURNs (over the reader's
//      cap), then 9,000 RETURNs for the proxy's uid written with legacy and read as root (under the
//      cap: the analysis runs to its deadline). Exit, verdict, wall time, the cgroup's peak
//      (memory.max_usage_in_bytes) and its OOM kills;
//   2. one re-check sweep (the agent's own modules, dist/) over 12 hostile pods (20,000 scattered
//      RETURNs, or 3,000 for the proxy's uid) beside 4 clean ones, concurrency 4, 5 s per pod:
//      the analysis in its workers, and the same sweep with the analysis on the event loop (as
//      before issue #43): wall time, answers, the event loop's longest delay, /healthz answered
//      within 1 s.
// Writes dist/bench/hostile.json. No packet leaves the namespaces it makes.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadAverage, machine } from './bench-machine.mjs';
import { stageRuntime } from './stage-runtime.mjs';

const root = resolve(import.meta.dirname, '..');
const results = resolve(root, process.env.BENCH_RESULTS ?? 'dist/bench');
const LIMIT = 128 * 1024 * 1024;
const LINKERD = readFileSync(join(root, 'test/fixtures/corpus/linkerd/cni-default/iptables-nft-save.v4.txt'), 'utf8');
const sh = (...args) => execFileSync(args[0], args.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
const tag = `ilhost${process.pid}`;
const tmp = mkdtempSync(join(tmpdir(), 'interlock-bench-hostile-'));
chmodSync(tmp, 0o777);
const namespaces = [];

/** Linkerd's corpus table with `count` RETURNs before its first rule: scattered, or the proxy's own uid. */
function hostileTable(count, owner) {
  const rules = Array.from({ length: count }, (_, i) =>
    owner
      ? `-A PROXY_INIT_OUTPUT -s 10.${(i >> 8) & 255}.${i & 255}.${(i * 7) & 255}/32 -d 10.${(i * 37) & 255}.${(i * 11) & 255}.0/24 -m owner --uid-owner 2102 -j RETURN`
      : `-A PROXY_INIT_OUTPUT -d 10.${(i * 37) & 255}.${(i * 11) & 255}.${i & 255}/32 -p tcp -m tcp --dport ${1024 + ((i * 7919) % 60000)} -j RETURN`,
  );
  return LINKERD.replace(/^(-A PROXY_INIT_OUTPUT )/m, `${rules.join('\n')}\n$1`);
}

function netns(name) {
  sh('ip', 'netns', 'add', name);
  namespaces.push(name);
  sh('ip', '-n', name, 'link', 'set', 'lo', 'up');
  return name;
}

/** A pod namespace routed into a sink whose only route is `unreachable`. */
function podNamespace(index) {
  const pod = netns(`${tag}p${index}`);
  const sink = netns(`${tag}s${index}`);
  sh('ip', 'link', 'add', `${tag}a`, 'type', 'veth', 'peer', 'name', `${tag}b`);
  sh('ip', 'link', 'set', `${tag}a`, 'netns', pod);
  sh('ip', 'link', 'set', `${tag}b`, 'netns', sink);
  sh('ip', '-n', pod, 'link', 'set', `${tag}a`, 'up');
  sh('ip', '-n', sink, 'link', 'set', `${tag}b`, 'up');
  sh('ip', '-n', sink, 'addr', 'add', `10.251.${index}.1/24`, 'dev', `${tag}b`);
  sh('ip', '-n', pod, 'addr', 'add', `10.251.${index}.2/24`, 'dev', `${tag}a`);
  sh('ip', '-n', pod, 'route', 'add', 'default', 'via', `10.251.${index}.1`);
  sh('ip', 'netns', 'exec', sink, 'sysctl', '-qw', 'net.ipv4.ip_forward=1');
  sh('ip', '-n', sink, 'route', 'add', 'unreachable', 'default');
  return pod;
}

/** The v1 memory cgroup of this process's own, or undefined (v2 is not measured here). */
function memoryCgroup(name) {
  const own = /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
  if (own === undefined) return undefined;
  const dir = join('/sys/fs/cgroup/memory', own, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'memory.limit_in_bytes'), String(LIMIT));
  if (existsSync(join(dir, 'memory.memsw.limit_in_bytes')))
    writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), String(LIMIT));
  return dir;
}

/** One validate in the cgroup, as the pod runs it. */
async function validateInCgroup(pod, stage, uid, label) {
  const dir = memoryCgroup(`${tag}-${label}`);
  const log = join(tmp, `termination-${label}`);
  const flags = readFileSync(join(stage, 'dist/snapshot/node-flags'), 'utf8').trim().split(/\s+/);
  const caps = [
    '--inh-caps=+net_admin,+net_raw',
    '--ambient-caps=+net_admin,+net_raw',
    '--bounding-set=-all,+net_admin,+net_raw',
  ];
  const argv = [
    ...['ip', 'netns', 'exec', pod, 'setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...caps],
    ...[process.execPath, ...flags, '--snapshot-blob', join(stage, 'dist/snapshot/interlock.blob')],
    ...['validate', '--termination-log', log, '--mesh', 'linkerd', '--rules', 'required', '--timeout', '5s'],
  ];
  const started = performance.now();
  const code = await new Promise((done) => {
    const child = spawn('/bin/sh', ['-c', `echo $$ > ${join(dir, 'cgroup.procs')} && exec "$@"`, 'sh', ...argv], {
      cwd: stage,
      stdio: 'ignore',
    });
    child.on('close', (exit, signal) => done(exit ?? signal));
  });
  const wallMs = performance.now() - started;
  const peak = Number(readFileSync(join(dir, 'memory.max_usage_in_bytes'), 'utf8'));
  const oomKills = Number(/^oom_kill (\d+)$/m.exec(readFileSync(join(dir, 'memory.oom_control'), 'utf8'))?.[1] ?? 0);
  rmdirSync(dir);
  const verdict = existsSync(log) ? readFileSync(log, 'utf8').split('\n')[0].split(':')[0] : '(no termination message)';
  return { label, exit: code, verdict, wallMs: Math.round(wallMs), peakMiB: +(peak / 1048576).toFixed(1), oomKills };
}

async function validateStep(stage) {
  const nft = podNamespace(1);
  execFileSync('ip', ['netns', 'exec', nft, 'iptables-nft-restore'], { input: hostileTable(20_000, false) });
  const legacy = podNamespace(2);
  execFileSync('ip', ['netns', 'exec', legacy, 'iptables-legacy-restore'], { input: hostileTable(9_000, true) });
  const runs = [];
  for (let i = 0; i < 3; i++) {
    runs.push(await validateInCgroup(nft, stage, 65534, `over-cap-${i}`));
    runs.push(await validateInCgroup(legacy, stage, 0, `under-cap-${i}`));
  }
  return runs;
}

/** GET /healthz with the kubelet's default 1 s timeout. */
function probe(port) {
  return new Promise((done) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', timeout: 1000 }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode === 200));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(false));
    req.end();
  });
}

async function sweepStep() {
  const dist = (path) => import(join(root, 'dist', path));
  const { sweep } = await dist('node-agent/recheck/sweep.js');
  const { readPodRules } = await dist('node-agent/recheck/netns-rules.js');
  const { AnalysisWorkers } = await dist('node-agent/recheck/worker-analysis.js');
  const { analysePod } = await dist('node-agent/recheck/pod-analysis.js');
  const { recheckPodOf, namespaceMetaOf } = await dist('node-agent/recheck/meshed-pod.js');
  const { decideVariants } = await dist('rules-check/decide.js');
  const { startHealthServer } = await dist('node-agent/health-server.js');
  const { Registry } = await import('prom-client');
  const pods = [];
  for (let i = 0; i < 16; i++) {
    const ns = netns(`${tag}r${i}`);
    const text = i < 4 ? LINKERD : hostileTable(i % 2 === 0 ? 20_000 : 3_000, i % 2 !== 0);
    execFileSync('ip', ['netns', 'exec', ns, 'iptables-nft-restore'], { input: text });
    const pod = recheckPodOf({
      metadata: { name: `pod-${i}`, namespace: 'shop', uid: `pod-${i}` },
      spec: { initContainers: [{ name: 'linkerd-network-validator' }], containers: [{ name: 'app' }] },
      status: { phase: 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] },
    });
    pods.push({ pod, ns });
  }
  const byUid = new Map(pods.map(({ pod, ns }) => [pod.uid, ns]));
  const info = (ns) =>
    new Map([
      [
        'info',
        JSON.stringify({ runtimeSpec: { linux: { namespaces: [{ type: 'network', path: `/run/netns/${ns}` }] } } }),
      ],
    ]);
  const runtime = {
    listSandboxes: async (uid) => ({ ok: true, value: [{ id: uid, uid, ready: true }] }),
    sandboxStatus: async (id) => ({ ok: true, value: { id, ready: true, info: info(byUid.get(id)) } }),
    close: () => undefined,
  };
  const workers = new AnalysisWorkers(join(root, 'dist/node-agent/recheck/rules-worker.js'));
  const inThread = async (r) => ({
    kind: 'answered',
    answer: {
      inspections: r.specs.map(
        (spec) =>
          decideVariants(
            [spec],
            r.outcomes,
            { families: r.families, mode: 'required', analysisDeadline: performance.now() + r.remainingMs },
            () => true,
          )[0],
      ),
    },
  });
  const out = [];
  for (const [label, analyse] of [
    ['workers', (r, ms) => analysePod(workers, r, ms)],
    ['event loop (before)', inThread],
    ['workers', (r, ms) => analysePod(workers, r, ms)],
  ]) {
    const server = await startHealthServer(new Registry(), () => true, '127.0.0.1', 0);
    const port = server.address().port;
    const probes = [];
    let on = true;
    const prober = (async () => {
      while (on) {
        probes.push(await probe(port));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = performance.now();
    const outcome = await sweep(
      pods.map(({ pod }) => pod),
      new Map(),
      {
        runtime,
        namespace: async () => namespaceMetaOf({}),
        readRules: readPodRules,
        analyse,
        now: () => performance.now(),
      },
      { concurrency: 4, podDeadlineMs: 5000, sweepBudgetMs: 30_000 },
    );
    const wallMs = performance.now() - started;
    delay.disable();
    on = false;
    await prober;
    server.close();
    const answers = {};
    for (const { check } of outcome.results) {
      const key = check.kind === 'unknown' ? `unknown:${check.cause}` : check.kind;
      answers[key] = (answers[key] ?? 0) + 1;
    }
    out.push({
      label,
      wallMs: Math.round(wallMs),
      answers,
      loopDelayMaxMs: Math.round(delay.max / 1e6),
      healthz: `${probes.filter(Boolean).length}/${probes.length}`,
    });
  }
  workers.close();
  return out;
}

try {
  const load = loadAverage();
  const stage = stageRuntime();
  try {
    const validate = await validateStep(stage);
    const sweeps = await sweepStep();
    const report = { machine: machine(), loadBefore: load, loadAfter: loadAverage(), validate, sweeps };
    mkdirSync(results, { recursive: true });
    writeFileSync(join(results, 'hostile.json'), `${JSON.stringify(report, null, 2)}\n`);
    const m = report.machine;
    console.log(
      `hostile rules (issue #43): ${m.nproc} CPUs (${m.cpu}), kernel ${m.kernel}, node ${m.node}, ${m.date}; load ${load} before, ${report.loadAfter} after`,
    );
    for (const run of validate)
      console.log(
        `  validate ${run.label}: exit ${run.exit}, ${run.verdict}, ${run.wallMs} ms, cgroup peak ${run.peakMiB} MiB of 128, OOM kills ${run.oomKills}`,
      );
    for (const run of sweeps)
      console.log(
        `  sweep, analysis in ${run.label}: ${run.wallMs} ms, ${JSON.stringify(run.answers)}, event loop delay max ${run.loopDelayMaxMs} ms, /healthz ${run.healthz}`,
      );
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
} finally {
  for (const ns of namespaces.reverse()) {
    try {
      sh('ip', 'netns', 'del', ns);
    } catch {
      /* gone */
    }
  }
  rmSync(tmp, { recursive: true, force: true });
}
