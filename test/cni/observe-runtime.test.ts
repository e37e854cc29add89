import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { auditCni } from '../../src/cni/audit-cni.js';
import { followed, observeRuntime, withObservation, type Observation } from '../../src/cni/observe-runtime.js';
import { parseRuntimeCniConfig, type RuntimeCniConfig } from '../../src/cni/runtime-cni-config.js';
import { fail, ok } from '../../src/reason/result.js';
import { inventory, listing } from './listing.js';

// How the audit takes the runtime's answer: whom it follows, under which root, and what it says
// when the answer cannot be compared. containerd's answer is the real GKE one (the fixtures' README).
const gke = JSON.parse(
  readFileSync(fileURLToPath(new URL('../fixtures/cni/cri-status/gke-layout.json', import.meta.url)), 'utf8'),
) as { info: Record<string, string>; files: Record<string, string> };
const held: RuntimeCniConfig = (() => {
  const parsed = parseRuntimeCniConfig(new Map(Object.entries(gke.info)));
  if (!parsed.ok) throw new Error(parsed.error.message);
  return { ...parsed.value, maxConfNum: 3 };
})();
const answered = (runtime: 'containerd' | 'crio'): Observation =>
  runtime === 'containerd'
    ? { kind: 'answered', socket: '/run/containerd/containerd.sock', status: { runtime, held } }
    : { kind: 'answered', socket: '/var/run/crio/crio.sock', status: { runtime, crio: { sandboxImage: 'p' } } };
const options = {
  confDir: '/etc/cni/net.d',
  binDirs: ['/opt/cni/bin'],
  runtime: 'containerd' as const,
  maxConfNum: 1,
  followRuntime: { confDir: true, binDirs: true, maxConfNum: true, runtime: true },
};

describe("following the runtime's answer", () => {
  it("containerd's directories and max_conf_num where no flag names them; a named one stays", () => {
    expect(followed(options, answered('containerd'))).toMatchObject({
      confDir: '<node-root>/net.d',
      binDirs: ['/home/kubernetes/bin'],
      maxConfNum: 3,
      runtime: 'containerd',
    });
    const named = { ...options, followRuntime: { confDir: false, binDirs: false, maxConfNum: false, runtime: true } };
    expect(followed(named, answered('containerd'))).toMatchObject({
      confDir: '/etc/cni/net.d',
      binDirs: ['/opt/cni/bin'],
      maxConfNum: 1,
    });
  });

  it("CRI-O answering: its rules, none of containerd's directories; --runtime named: another runtime's dirs are not taken", () => {
    expect(followed(options, answered('crio'))).toEqual({ ...options, runtime: 'crio' });
    const crio = { ...options, runtime: 'crio' as const, followRuntime: { ...options.followRuntime, runtime: false } };
    expect(followed(crio, answered('containerd'))).toEqual(crio);
    expect(followed(options, { kind: 'unanswered', asked: 'default', tries: [] })).toBe(options);
  });

  it("the runtime's paths are read under the host root; a socket that fails is passed over, a shapeless answer ends the search", async () => {
    const asked: string[] = [];
    const observation = await observeRuntime({
      sockets: ['/host/run/containerd/containerd.sock', '/host/var/run/crio/crio.sock'],
      asked: 'default',
      hostRoot: '/host',
      ask: (socket) => {
        asked.push(socket);
        return Promise.resolve(
          socket.includes('crio') ? fail('RuntimeUnreachable', 'never') : ok(new Map(Object.entries(gke.info))),
        );
      },
    });
    expect(asked).toEqual(['/host/run/containerd/containerd.sock']);
    expect(observation).toMatchObject({
      kind: 'answered',
      status: { held: { confDir: '/host/<node-root>/net.d', pluginDirs: ['/host/home/kubernetes/bin'] } },
    });
    const shapeless = await observeRuntime({
      sockets: ['/a.sock', '/b.sock'],
      asked: 'default',
      ask: (socket) => Promise.resolve(socket === '/a.sock' ? ok(new Map([['x', 'y']])) : fail('RuntimeError', 'b')),
    });
    expect(shapeless).toMatchObject({ kind: 'invalid', socket: '/a.sock' });
  });
});

describe('the verdict with an answer it cannot compare', () => {
  const prediction = () => {
    const files = listing({ ...gke.files }, '<node-root>/net.d');
    const verdict = auditCni({
      listing: files,
      runtime: 'crio',
      meshPlugin: 'linkerd-cni',
      binDirs: ['/home/kubernetes/bin'],
      inventory: inventory(['bridge', 'portmap', 'linkerd-cni']),
    });
    return { verdict, listing: files, binDirs: ['/home/kubernetes/bin'] };
  };

  it('containerd answering an audit of CRI-O rules: a disagreement, and no observed claim', () => {
    const verdict = withObservation(prediction(), answered('containerd'));
    expect(verdict.observed).toBeUndefined();
    expect(verdict.healthy).toBe(false);
    expect(verdict.findings.map((finding) => finding.code)).toEqual(['RuntimeDisagrees']);
  });

  it('every socket tried is named, each with why; a named one unanswered is an error', () => {
    const tries = [
      { socket: '/a.sock', message: 'no socket there' },
      { socket: '/b.sock', message: 'not a socket' },
    ];
    const fallback = withObservation(prediction(), { kind: 'unanswered', asked: 'default', tries });
    expect(fallback.healthy).toBe(prediction().verdict.healthy);
    expect(fallback.findings.at(-1)?.message).toMatch(
      /^no container runtime answered the CRI Status on \/a\.sock \(no socket there\), \/b\.sock \(not a socket\): the audit judged <node-root>\/net\.d with plugins in \/home\/kubernetes\/bin as given or by default/,
    );
    const named = withObservation(prediction(), { kind: 'unanswered', asked: 'named', tries });
    expect(named.findings.at(-1)).toEqual({
      code: 'RuntimeUnobserved',
      severity: 'error',
      message: 'cannot compare the prediction with what CRI-O loaded: no socket there; not a socket',
    });
    expect(named.healthy).toBe(false);
  });
});
