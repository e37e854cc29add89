import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfigFor } from '../harness/kube-api/kubeconfig.js';
import { corpusFile, verdictLine, REPO_ROOT, usePods, type PodNamespace } from '../harness/pod-namespace.js';

const pod = usePods(afterEach);
const children: ChildProcess[] = [];
let dir: string;
let standIn: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'interlock-events-'));
  chmodSync(dir, 0o755);
  standIn = join(dir, 'kube-api.mjs');
  // The stand-in runs as its own process inside the sink namespace, where a cluster's API server
  // would be reachable from the pod; it never listens on an outside address.
  await build({
    entryPoints: [join(REPO_ROOT, 'test/harness/kube-api/main.ts')],
    outfile: standIn,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    // The stand-in reads its fixtures next to its source, wherever the bundle runs from.
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(join(REPO_ROOT, 'test/harness/kube-api/main.ts')).href) },
  });
});
afterEach(() => {
  while (children.length) children.pop()?.kill('SIGKILL');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function gatewayOf(ns: PodNamespace): string {
  return ns.ipv4Address.replace(/\.2$/, '.1');
}

/** Starts a node program in the sink namespace and resolves with its first stdout line. */
function startInSink(ns: PodNamespace, args: string[], env: Record<string, string> = {}): Promise<string> {
  const child = spawn('ip', ['netns', 'exec', ns.sink, process.execPath, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0] ?? '');
    });
    child.on('exit', (code) => reject(new Error(`sink process exited ${code}`)));
  });
}

function kubectl(ns: PodNamespace, kubeconfig: string, args: string[], input?: string): string {
  return execFileSync(
    'ip',
    ['netns', 'exec', ns.sink, 'kubectl', '--kubeconfig', kubeconfig, '--request-timeout=10s', ...args],
    {
      encoding: 'utf8',
      input,
      env: { PATH: process.env.PATH ?? '', HOME: dir },
      timeout: 30_000,
    },
  );
}

async function cluster(ns: PodNamespace): Promise<{ kubeconfig: string; uid: string }> {
  const url = await startInSink(ns, [standIn], { STANDIN_HOST: gatewayOf(ns) });
  expect(url).toMatch(new RegExp(`^http://${gatewayOf(ns).replace(/\./g, '\\.')}:\\d+$`));
  const kubeconfig = join(ns.tmp, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigFor(url), { mode: 0o644 });
  kubectl(
    ns,
    kubeconfig,
    ['create', '--validate=false', '-f', '-'],
    'apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: shop}\nspec:\n  containers: [{name: app, image: app}]\n',
  );
  const uid = kubectl(ns, kubeconfig, ['get', 'pod', 'web-1', '-n', 'shop', '-o', 'jsonpath={.metadata.uid}']);
  expect(uid).not.toBe('');
  return { kubeconfig, uid };
}

const podEnv = (kubeconfig: string, uid: string) => ({
  KUBECONFIG: kubeconfig,
  POD_NAME: 'web-1',
  POD_NAMESPACE: 'shop',
  POD_UID: uid,
});

describe('validate --report-event: the failure in kubectl describe pod', () => {
  it('a failed validation posts a Warning Event that kubectl describe pod and kubectl get events show', async () => {
    const ns = pod();
    const { kubeconfig, uid } = await cluster(ns);
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '3s', '--report-event'], {
      env: podEnv(kubeconfig, uid),
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(95);
    const sentence = verdictLine(run.terminationMessage).replace(/^InterceptionMissing: /, '');
    // The destination is drawn at random from the documentation ranges the pod routes.
    expect(sentence).toMatch(
      /^IPv4 connection to (192\.0\.2|198\.51\.100|203\.0\.113)\.\d{1,3}:20001 was not redirected to port 4140/,
    );
    expect(run.logs.some((line) => String(line.msg).startsWith('failure Event web-1.'))).toBe(true);

    const describePod = kubectl(ns, kubeconfig, ['describe', 'pod', 'web-1', '-n', 'shop']);
    expect(describePod).toMatch(/Events:[\s\S]*Warning\s+InterceptionMissing\s+\S+\s+interlock/);
    expect(describePod.replace(/\s+/g, ' ')).toContain(sentence.replace(/\s+/g, ' ').slice(0, 60));
    const events = kubectl(ns, kubeconfig, ['get', 'events', '-n', 'shop', '-o', 'json']);
    const items = (JSON.parse(events) as { items: Array<Record<string, unknown>> }).items;
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      type: 'Warning',
      reason: 'InterceptionMissing',
      involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'shop', uid },
      source: { component: 'interlock' },
      reportingComponent: 'interlock',
    });
    expect(items[0]?.reportingInstance).not.toBe('');
    // The same pod failing again (a crash loop) counts the one Event up.
    const again = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '2s', '--report-event'], {
      env: podEnv(kubeconfig, uid),
    });
    expect(again.exitCode).toBe(95);
    const counted = (
      JSON.parse(kubectl(ns, kubeconfig, ['get', 'events', '-n', 'shop', '-o', 'json'])) as {
        items: Array<Record<string, unknown>>;
      }
    ).items;
    expect(counted.map((item) => [item.reason, item.count])).toEqual([['InterceptionMissing', 2]]);
    expect(kubectl(ns, kubeconfig, ['describe', 'pod', 'web-1', '-n', 'shop'])).toMatch(
      /Warning\s+InterceptionMissing\s+\S+ \(x2 over \S+\)\s+interlock/,
    );
    const listed = kubectl(ns, kubeconfig, ['get', 'events', '-n', 'shop']);
    expect(listed, listed).toMatch(/Warning\s+InterceptionMissing\s+pod\/web-1\s/);
  });

  it('a pass posts nothing', async () => {
    const ns = pod();
    const { kubeconfig, uid } = await cluster(ns);
    ns.applyRules(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s', '--report-event'], {
      env: podEnv(kubeconfig, uid),
    });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(JSON.parse(kubectl(ns, kubeconfig, ['get', 'events', '-n', 'shop', '-o', 'json'])).items).toEqual([]);
  });

  it('a configuration error is reported too (reason ConfigInvalid), and still exits 64', async () => {
    const ns = pod();
    const { kubeconfig, uid } = await cluster(ns);
    const run = await ns.runInterlock(['--mesh', 'generic', '--report-event'], { env: podEnv(kubeconfig, uid) });
    expect(run.exitCode).toBe(64);
    const items = (
      JSON.parse(kubectl(ns, kubeconfig, ['get', 'events', '-n', 'shop', '-o', 'json'])) as {
        items: Array<Record<string, unknown>>;
      }
    ).items;
    expect(items.map((item) => item.reason)).toEqual(['ConfigInvalid']);
    expect(items[0]?.message).toMatch(/--mesh generic has no inbound port/);
  });

  it('without --report-event a failure posts nothing', async () => {
    const ns = pod();
    const { kubeconfig, uid } = await cluster(ns);
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '2s'], { env: podEnv(kubeconfig, uid) });
    expect(run.exitCode).toBe(95);
    expect(JSON.parse(kubectl(ns, kubeconfig, ['get', 'events', '-n', 'shop', '-o', 'json'])).items).toEqual([]);
  });
});

describe('a forbidden, unreachable or silent API never changes the verdict', () => {
  const SERVERS: Record<string, string> = {
    forbidden:
      "const s=require('http').createServer((q,r)=>{q.resume();q.on('end',()=>{r.writeHead(403,{'content-type':'application/json'});r.end(JSON.stringify({kind:'Status',code:403,message:'events is forbidden: User \"system:serviceaccount:shop:default\" cannot create resource \"events\"'}))})});s.listen(0,process.env.H,()=>console.log('http://'+process.env.H+':'+s.address().port))",
    silent:
      "const s=require('net').createServer(()=>{});s.listen(0,process.env.H,()=>console.log('http://'+process.env.H+':'+s.address().port))",
  };
  for (const [kind, script] of Object.entries(SERVERS)) {
    it(`${kind}: still exit 95 with the same termination message, and the cause logged`, async () => {
      const ns = pod();
      const url = await startInSink(ns, ['-e', script], { H: gatewayOf(ns) });
      const kubeconfig = join(ns.tmp, 'kubeconfig');
      writeFileSync(kubeconfig, kubeconfigFor(url), { mode: 0o644 });
      const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '2s', '--report-event'], {
        env: podEnv(kubeconfig, 'u-1'),
      });
      expect(run.exitCode).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(/^InterceptionMissing: /);
      const warning = run.logs.find((line) => String(line.msg).startsWith('failure Event not reported'));
      expect(String(warning?.msg)).toMatch(
        // What is left of the 1 s budget once the credentials are read.
        kind === 'forbidden' ? /answered 403: events is forbidden/ : /no complete answer within \d+ ms/,
      );
    });
  }

  it('unreachable (nothing listens; no cluster at all): exit 95, logged', async () => {
    const ns = pod();
    const kubeconfig = join(ns.tmp, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigFor(`http://${gatewayOf(ns)}:9`), { mode: 0o644 });
    const refused = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '2s', '--report-event'], {
      env: podEnv(kubeconfig, 'u-1'),
    });
    expect(refused.exitCode).toBe(95);
    expect(
      refused.logs.some((line) => /failure Event not reported: POST .* failed: .*ECONNREFUSED/.test(String(line.msg))),
    ).toBe(true);
    const nowhere = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '2s', '--report-event'], {
      env: { POD_NAME: 'web-1', POD_NAMESPACE: 'shop' },
    });
    expect(nowhere.exitCode).toBe(95);
    expect(
      nowhere.logs.some((line) => /KUBECONFIG is not set and KUBERNETES_SERVICE_HOST/.test(String(line.msg))),
    ).toBe(true);
  });
});
