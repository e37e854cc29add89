import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { recheckPod, type RecheckPodPorts } from '../../../src/node-agent/recheck/recheck-pod.js';
import { expectationOf } from '../../../src/node-agent/recheck/expectations.js';
import { namespaceMetaOf, recheckPodOf, type RecheckPod } from '../../../src/node-agent/recheck/meshed-pod.js';
import { readPodRules } from '../../../src/node-agent/recheck/netns-rules.js';
import { readPodSockets } from '../../../src/node-agent/recheck/netns-sockets.js';
import type { PodCapture } from '../../../src/node-agent/recheck/pod-capture.js';
import { decideVariants } from '../../../src/rules-check/decide.js';
import { ambientGoldens, flushAll, loadIptablesGolden } from '../../ambient/goldens.js';
import { makeNamespace, removeNamespace } from '../../ambient/dumps.js';

// Issue #44, item 6 (istio/istio#57285): an ambient pod whose rules are intact while nothing listens
// on ztunnel's ports any more sends its traffic to no one, and the re-check never saw it. Here
// istio-cni's own golden is loaded into a real namespace by iptables, ztunnel's listeners are real
// sockets bound in it, and the re-check reads both through its nsenter children. Only the runtime
// that names the namespace is a stand-in (it is not what is under test). No packet is sent.
const namespace = makeNamespace('amb-listen');
const netns = `/run/netns/${namespace}`;
const listeners: ChildProcess[] = [];
afterEach(() => stopListeners());
afterAll(() => removeNamespace(namespace));

const POD: RecheckPod = recheckPodOf({
  metadata: { name: 'web', namespace: 'shop', uid: 'u1', labels: { 'istio.io/dataplane-mode': 'ambient' } },
  spec: { containers: [{ name: 'app' }] },
  status: { phase: 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] },
})!;

const PORTS: RecheckPodPorts = {
  runtime: {
    listSandboxes: async () => ({ ok: true, value: [{ id: 's1', uid: 'u1', ready: true }] }),
    sandboxStatus: async () => ({
      ok: true,
      value: {
        id: 's1',
        ready: true,
        info: new Map([
          ['info', JSON.stringify({ runtimeSpec: { linux: { namespaces: [{ type: 'network', path: netns }] } } })],
        ]),
      },
    }),
    close: () => undefined,
  },
  readRules: readPodRules,
  readSockets: readPodSockets,
  // In the test's own thread: the agent's worker runs the same decideVariants (rules-worker.ts).
  analyse: async (request) => ({
    kind: 'answered',
    answer: {
      inspections: decideVariants(
        request.specs,
        request.outcomes,
        { families: request.families, mode: 'required' },
        (inspection) => inspection.status === 'passed',
      ),
    },
  }),
  now: () => performance.now(),
};

/** ztunnel's stand-in: a node process in the pod's namespace listening on `ports` (it never accepts a byte). */
async function listen(ports: readonly number[]): Promise<void> {
  const script = `const net=require('net');let n=0;for(const p of ${JSON.stringify(ports)})net.createServer(s=>s.destroy()).listen(p,'::',()=>{if(++n===${ports.length})console.log('up')});`;
  const child = spawn('ip', ['netns', 'exec', namespace, process.execPath, '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  listeners.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`listener exited ${String(code)}`)));
  });
}

function stopListeners(): void {
  for (const child of listeners.splice(0)) child.kill('SIGKILL');
}

async function check(): Promise<PodCapture> {
  const expectation = expectationOf('istio-ambient', POD, namespaceMetaOf({}));
  return recheckPod(POD, expectation, PORTS, 10_000);
}

const reasonOf = (result: PodCapture) => (result.kind === 'lost' ? `lost:${result.reason}` : result.kind);

describe("the re-check reads an ambient pod's listeners with its rules", () => {
  const golden = ambientGoldens().find((g) => g.tag === '1.25.0' && g.backend === 'iptables' && g.name === 'default')!;

  it('rules intact, nothing listening: ZtunnelNotListening (an outage), never CaptureLost; listeners back: captured', async () => {
    flushAll(namespace);
    loadIptablesGolden(namespace, golden, 'nft');
    const gone = await check();
    expect(reasonOf(gone)).toBe('lost:ZtunnelNotListening');
    expect(gone.kind === 'lost' && gone.message).toContain('nothing listens on ports 15001, 15006, 15008');
    await listen([15001, 15006, 15008]);
    expect(reasonOf(await check())).toBe('captured');
  });

  it('one listener missing (15008, HBONE) is enough to report it, and names that port', async () => {
    flushAll(namespace);
    loadIptablesGolden(namespace, golden, 'nft');
    await listen([15001, 15006]);
    const result = await check();
    expect(reasonOf(result)).toBe('lost:ZtunnelNotListening');
    expect(result.kind === 'lost' && result.evidence).toEqual(['no TCP listener on port 15008']);
  });

  it('rules flushed with the listeners up stays CaptureLost', async () => {
    flushAll(namespace);
    await listen([15001, 15006, 15008]);
    expect(reasonOf(await check())).toBe('lost:CaptureLost');
  });

  it('socket tables that cannot be read leave the pod unknown, never captured', async () => {
    flushAll(namespace);
    loadIptablesGolden(namespace, golden, 'nft');
    const unreadable: RecheckPodPorts = {
      ...PORTS,
      readSockets: () => readPodSockets('/run/netns/interlock-absent', 2000),
    };
    const result = await recheckPod(POD, expectationOf('istio-ambient', POD, namespaceMetaOf({})), unreadable, 10_000);
    expect(result.kind === 'unknown' && result.cause).toBe('sockets-unreadable');
  });
});
