import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sandboxNetnsPath } from '../../../src/node-agent/cri/sandbox-netns.js';
import type { RuntimeClient } from '../../../src/node-agent/cri/cri-client.js';
import { agree, type Memory, type SweepResult } from '../../../src/node-agent/recheck/agreement.js';
import { recheckPod, type RecheckPodPorts } from '../../../src/node-agent/recheck/recheck-pod.js';
import { expectationOf } from '../../../src/node-agent/recheck/expectations.js';
import {
  captureModeOf,
  namespaceMetaOf,
  recheckPodOf,
  type RecheckPod,
} from '../../../src/node-agent/recheck/meshed-pod.js';
import type { PodCapture } from '../../../src/node-agent/recheck/pod-capture.js';
import { decideInspection, decideVariants } from '../../../src/rules-check/decide.js';
import type { ReadOutcome } from '../../../src/rules/read/classify.js';

const CORPUS = fileURLToPath(new URL('../../fixtures/corpus/', import.meta.url));
const nftSave = (path: string): ReadOutcome => ({
  kind: 'read',
  dump: {
    backend: 'iptables-nft',
    family: 'ipv4',
    source: 'iptables-nft-save',
    text: readFileSync(`${CORPUS}${path}`, 'utf8'),
  },
});
const EMPTY_NFT: ReadOutcome = {
  kind: 'read',
  dump: {
    backend: 'nftables',
    source: 'nft -j list ruleset',
    text: '{"nftables":[{"metainfo":{"json_schema_version":1}}]}',
  },
};
const EMPTY_SAVE: ReadOutcome = {
  kind: 'read',
  dump: { backend: 'iptables-nft', family: 'ipv4', source: 'iptables-nft-save', text: '' },
};

function pod(
  overrides: {
    annotations?: object;
    labels?: object;
    containers?: string[];
    init?: string[];
    hostNetwork?: boolean;
    phase?: string;
    deleting?: boolean;
  } = {},
) {
  return {
    metadata: {
      name: 'web-1',
      namespace: 'shop',
      uid: 'uid-1',
      resourceVersion: '7',
      annotations: overrides.annotations ?? {},
      labels: overrides.labels ?? {},
      ownerReferences: [{ kind: 'ReplicaSet', uid: 'rs-1', controller: true }],
      ...(overrides.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: {
      nodeName: 'node-a',
      hostNetwork: overrides.hostNetwork ?? false,
      initContainers: (overrides.init ?? []).map((name) => ({ name })),
      containers: (overrides.containers ?? ['app']).map((name) => ({ name })),
    },
    status: { phase: overrides.phase ?? 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] },
  };
}
const view = (input: object): RecheckPod => recheckPodOf(input)!;
const noNs = namespaceMetaOf({});

describe('which pods the re-check takes, and as what', () => {
  it('knows sidecar pods by the mesh validator or proxy, Interlock drop-ins included', () => {
    expect(captureModeOf(view(pod({ init: ['linkerd-network-validator'] })), noNs)).toBe('linkerd');
    expect(captureModeOf(view(pod({ containers: ['app', 'linkerd-proxy'] })), noNs)).toBe('linkerd');
    expect(captureModeOf(view(pod({ init: ['istio-validation'], containers: ['app', 'istio-proxy'] })), noNs)).toBe(
      'istio',
    );
    expect(captureModeOf(view(pod({ annotations: { 'sidecar.istio.io/status': '{}' } })), noNs)).toBe('istio');
    expect(captureModeOf(view(pod({ containers: ['istio-proxy', 'linkerd-proxy'] })), noNs)).toBeUndefined();
    expect(captureModeOf(view(pod()), noNs)).toBeUndefined();
  });

  it('knows ambient pods by the pod or namespace label or the redirection record; none opts out', () => {
    const ambientNs = namespaceMetaOf({ metadata: { labels: { 'istio.io/dataplane-mode': 'ambient' } } });
    expect(captureModeOf(view(pod()), ambientNs)).toBe('istio-ambient');
    expect(captureModeOf(view(pod({ labels: { 'istio.io/dataplane-mode': 'ambient' } })), noNs)).toBe('istio-ambient');
    expect(captureModeOf(view(pod({ annotations: { 'ambient.istio.io/redirection': 'enabled' } })), noNs)).toBe(
      'istio-ambient',
    );
    expect(captureModeOf(view(pod({ labels: { 'istio.io/dataplane-mode': 'none' } })), ambientNs)).toBeUndefined();
    // A sidecar wins: istio-cni never puts a sidecar pod in ambient.
    expect(captureModeOf(view(pod({ containers: ['app', 'istio-proxy'] })), ambientNs)).toBe('istio');
  });

  it('drops host-network pods and keeps what delete needs', () => {
    expect(recheckPodOf(pod({ hostNetwork: true }))).toBeUndefined();
    expect(view(pod({ deleting: true }))).toMatchObject({
      terminating: true,
      ownerKind: 'ReplicaSet',
      ownerUid: 'rs-1',
      families: ['ipv4'],
    });
  });
});

describe('the expectation is the validator’s: same preset, same annotations, same engine', () => {
  const linkerd = view(pod({ init: ['linkerd-network-validator'] }));
  const spec = (p: RecheckPod, ns = noNs) => {
    const found = expectationOf('linkerd', p, ns);
    if (found.kind !== 'spec') throw new Error(found.why);
    return found;
  };

  it('passes linkerd-cni rules and finds a flushed nat table lost, naming the region', () => {
    const expectation = spec(linkerd);
    const options = { families: expectation.families, mode: 'required' as const };
    expect(
      decideInspection(
        expectation.specs[0]!,
        [nftSave('linkerd/cni-default/iptables-nft-save.v4.txt'), EMPTY_NFT],
        options,
      ).status,
    ).toBe('passed');
    const flushed = decideInspection(expectation.specs[0]!, [EMPTY_SAVE, EMPTY_NFT], options);
    expect(flushed.status).toBe('failed');
    expect(flushed.message).toMatch(/expected/);
  });

  it("takes Linkerd exclusions from the namespace when the pod has none, the pod's first", () => {
    const ns = namespaceMetaOf({
      metadata: { annotations: { 'config.linkerd.io/skip-outbound-ports': '25', other: 'x' } },
    });
    expect(JSON.stringify(spec(linkerd, ns).specs[0]!.excludeOutboundPorts)).toContain('25');
    const own = view(
      pod({ init: ['linkerd-network-validator'], annotations: { 'config.linkerd.io/skip-outbound-ports': '3306' } }),
    );
    const both = JSON.stringify(spec(own, ns).specs[0]!.excludeOutboundPorts);
    expect(both).toContain('3306');
    expect(both).not.toContain('"from":25');
  });

  it("reads an ambient pod's own annotations over the chart's, as istio-cni does (issue #44)", () => {
    const specsOf = (annotations: object) => {
      const found = expectationOf('istio-ambient', view(pod({ annotations })), noNs);
      if (found.kind !== 'spec') throw new Error(found.why);
      return found.specs;
    };
    const plain = specsOf({});
    // The chart's DNS switch is unseen: with and without DNS capture, each inbound by REDIRECT or TPROXY.
    expect(plain).toHaveLength(4);
    expect(plain.every((spec) => spec.includeInboundPorts.kind === 'all')).toBe(true);
    const bypass = specsOf({ 'ambient.istio.io/bypass-inbound-capture': 'True' });
    expect(
      bypass.every(
        (spec) => spec.includeInboundPorts.kind === 'ranges' && spec.includeInboundPorts.ranges.length === 0,
      ),
    ).toBe(true);
    // A value Go's ParseBool refuses is ignored by istio-cni, so here too.
    expect(specsOf({ 'ambient.istio.io/bypass-inbound-capture': 'yes' })).toEqual(plain);
    // The pod's DNS switch leaves no chart variant to hide behind.
    const dnsOn = specsOf({ 'ambient.istio.io/dns-capture': 'true' });
    expect(dnsOn).toHaveLength(2);
    expect(dnsOn.every((spec) => spec.dnsCapture !== undefined)).toBe(true);
    const dnsOff = specsOf({ 'ambient.istio.io/dns-capture': '0' });
    expect(dnsOff.every((spec) => spec.dnsCapture === undefined)).toBe(true);
    const reroute = specsOf({ 'istio.io/reroute-virtual-interfaces': ' fake1s0f0, ,fake1s0f1 ' });
    expect(reroute.every((spec) => spec.rerouteInterfaces.join(',') === 'fake1s0f0,fake1s0f1')).toBe(true);
  });

  it('passes istio-cni rules with the Istio preset', () => {
    const istio = view(pod({ init: ['istio-validation'] }));
    const found = expectationOf('istio', istio, noNs);
    expect(found.kind).toBe('spec');
    if (found.kind !== 'spec') return;
    const answer = decideInspection(found.specs[0]!, [nftSave('istio-cni/basic/iptables-nft-save.v4.txt'), EMPTY_NFT], {
      families: found.families,
      mode: 'required',
    });
    expect(answer.status).toBe('passed');
  });

  it('judges an ambient pod in every chart-wide variant it cannot see: DNS capture on or off, TPROXY or not', () => {
    const found = expectationOf('istio-ambient', view(pod()), noNs);
    if (found.kind !== 'spec') throw new Error(found.why);
    expect(found.specs.map((spec) => [spec.mesh, spec.dnsCapture !== undefined, spec.tproxy])).toEqual([
      ['istio-ambient', true, false],
      ['istio-ambient', false, false],
      ['istio-ambient', true, true],
      ['istio-ambient', false, true],
    ]);
    // A pod without an IP yet is unknown, never lost.
    const noIp = pod();
    noIp.status = { phase: 'Running', podIP: '', podIPs: [] };
    expect(expectationOf('istio-ambient', view(noIp), noNs).kind).toBe('unknown');
  });
});

describe('the network namespace, from the runtime only', () => {
  const info = (value: object) => new Map([['info', JSON.stringify(value)]]);
  const spec = (namespaces: object[]) => ({ runtimeSpec: { linux: { namespaces } } });

  it('reads containerd and CRI-O verbose info alike', () => {
    expect(
      sandboxNetnsPath(info({ pid: 5, ...spec([{ type: 'pid' }, { type: 'network', path: '/var/run/netns/cni-1' }]) })),
    ).toEqual({
      ok: true,
      value: '/var/run/netns/cni-1',
    });
  });

  it('refuses a closed, missing, shared or odd namespace', () => {
    expect(
      sandboxNetnsPath(info({ netNamespaceClosed: true, ...spec([{ type: 'network', path: '/run/netns/x' }]) })),
    ).toMatchObject({ ok: false, error: { reason: 'NetnsClosed' } });
    expect(sandboxNetnsPath(new Map())).toMatchObject({ ok: false });
    expect(sandboxNetnsPath(new Map([['info', 'not json']]))).toMatchObject({ ok: false });
    expect(sandboxNetnsPath(info(spec([{ type: 'network' }])))).toMatchObject({ ok: false });
    expect(sandboxNetnsPath(info(spec([{ type: 'network', path: '/run/netns/../../proc/1/ns/net' }])))).toMatchObject({
      ok: false,
    });
    expect(sandboxNetnsPath(info(spec([{ type: 'network', path: 'relative' }])))).toMatchObject({ ok: false });
    expect(
      sandboxNetnsPath(
        info(
          spec([
            { type: 'network', path: '/a' },
            { type: 'network', path: '/b' },
          ]),
        ),
      ),
    ).toMatchObject({ ok: false });
  });
});

const lost = (uid: string): SweepResult => ({
  uid,
  mode: 'linkerd',
  check: { kind: 'lost', reason: 'CaptureLost', message: 'm', evidence: [] },
});
const captured = (uid: string): SweepResult => ({ uid, mode: 'linkerd', check: { kind: 'captured', message: 'ok' } });
const unknownOf = (uid: string): SweepResult => ({
  uid,
  mode: 'linkerd',
  check: { kind: 'unknown', cause: 'no-sandbox', message: 'gone' },
});

describe('two consecutive sweeps must agree', () => {
  it('reports a loss at the second sweep that finds it, once', () => {
    const first = agree(new Map(), [lost('a'), captured('b')]);
    expect(first.confirmed).toEqual([]);
    const second = agree(first.memory, [lost('a'), captured('b')]);
    expect(second.confirmed.map((r) => r.uid)).toEqual(['a']);
    expect(second.lostByMode.get('linkerd')).toBe(1);
    const third = agree(second.memory, [lost('a')]);
    expect(third.confirmed).toEqual([]);
    expect(third.lostByMode.get('linkerd')).toBe(1);
  });

  it('an unknown between two losses starts over; a capture clears a report and is said', () => {
    let memory: Memory = agree(new Map(), [lost('a')]).memory;
    memory = agree(memory, [unknownOf('a')]).memory;
    const after = agree(memory, [lost('a')]);
    expect(after.confirmed).toEqual([]);
    const reported = agree(after.memory, [lost('a')]);
    expect(reported.confirmed).toHaveLength(1);
    const stillUnknown = agree(reported.memory, [unknownOf('a')]);
    expect(stillUnknown.lostByMode.get('linkerd')).toBe(1);
    const back = agree(stillUnknown.memory, [captured('a')]);
    expect(back.recovered).toEqual(['a']);
    expect(back.lostByMode.get('linkerd') ?? 0).toBe(0);
  });

  it('forgets pods no longer on the node', () => {
    const memory = agree(agree(new Map(), [lost('a')]).memory, [lost('a')]).memory;
    expect(agree(memory, []).memory.size).toBe(0);
  });
});

describe('one pod’s check never calls an unreadable pod lost', () => {
  const linkerd = view(pod({ init: ['linkerd-network-validator'] }));
  const expectation = expectationOf('linkerd', linkerd, noNs);
  const infoOf = (path: string) =>
    new Map([['info', JSON.stringify({ runtimeSpec: { linux: { namespaces: [{ type: 'network', path }] } } })]]);
  function ports(runtime: Partial<RuntimeClient>, outcomes: ReadOutcome[] = [EMPTY_SAVE, EMPTY_NFT]): RecheckPodPorts {
    return {
      runtime: {
        listSandboxes: async () => ({ ok: true, value: [{ id: 's1', uid: 'uid-1', ready: true }] }),
        sandboxStatus: async () => ({ ok: true, value: { id: 's1', ready: true, info: infoOf('/run/netns/cni-1') } }),
        close: () => undefined,
        ...runtime,
      },
      readRules: async () => outcomes,
      readSockets: async () => ({ ok: false, message: 'a sidecar pod: its sockets are never read' }),
      // In the test's own thread: the worker runs the same decideVariants (rules-worker.ts).
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
  }
  const kind = (check: PodCapture) => (check.kind === 'unknown' ? `unknown:${check.cause}` : check.kind);

  it('finds flushed rules lost and intact ones captured', async () => {
    expect(kind(await recheckPod(linkerd, expectation, ports({}), 5000))).toBe('lost');
    expect(
      kind(
        await recheckPod(
          linkerd,
          expectation,
          ports({}, [nftSave('linkerd/cni-default/iptables-nft-save.v4.txt'), EMPTY_NFT]),
          5000,
        ),
      ),
    ).toBe('captured');
  });

  it('with several legitimate configurations: captured when one holds, lost only when all fail', async () => {
    const linkerdSpec = expectation.kind === 'spec' ? expectation.specs[0]! : undefined;
    const istio = expectationOf('istio', view(pod({ init: ['istio-validation'] })), noNs);
    const both = {
      kind: 'spec' as const,
      specs: [istio.kind === 'spec' ? istio.specs[0]! : linkerdSpec!, linkerdSpec!],
      families: ['ipv4' as const],
    };
    const intact = [nftSave('linkerd/cni-default/iptables-nft-save.v4.txt'), EMPTY_NFT];
    expect(kind(await recheckPod(linkerd, both, ports({}, intact), 5000))).toBe('captured');
    expect(kind(await recheckPod(linkerd, both, ports({}), 5000))).toBe('lost');
  });

  it("is unknown, naming --netns-dir, when the runtime's namespace lies outside what the agent mounted", async () => {
    let read = 0;
    const mounted = (path: string): RecheckPodPorts => ({
      ...ports({
        sandboxStatus: async () => ({ ok: true, value: { id: 's1', ready: true, info: infoOf(path) } }),
      }),
      readRules: async () => (read++, [EMPTY_SAVE, EMPTY_NFT]),
      netnsDirs: ['/run/netns', '/var/run/netns'],
    });
    const elsewhere = '/run/containerd/io.containerd.grpc.v1.cri/netns/cni-1';
    const outside = await recheckPod(linkerd, expectation, mounted(elsewhere), 5000);
    expect(kind(outside)).toBe('unknown:rules-unreadable');
    expect(outside.kind === 'unknown' && outside.message).toContain(`${elsewhere}, outside --netns-dir /run/netns`);
    expect(read).toBe(0);
    // A sibling directory sharing the prefix is not inside it.
    expect(kind(await recheckPod(linkerd, expectation, mounted('/run/netns-other/cni-1'), 5000))).toBe(
      'unknown:rules-unreadable',
    );
    expect(kind(await recheckPod(linkerd, expectation, mounted('/var/run/netns/cni-1'), 5000))).toBe('lost');
    expect(read).toBe(1);
  });

  it('is unknown when the sandbox went away while its rules were read', async () => {
    let calls = 0;
    const status: RuntimeClient['sandboxStatus'] = async () =>
      calls++ === 0
        ? { ok: true, value: { id: 's1', ready: true, info: infoOf('/run/netns/cni-1') } }
        : { ok: false, error: { reason: 'RuntimeError', message: 'not found' } };
    expect(kind(await recheckPod(linkerd, expectation, ports({ sandboxStatus: status }), 5000))).toBe(
      'unknown:no-sandbox',
    );
  });

  it('is unknown with no sandbox, two sandboxes, an unreachable runtime, unreadable rules or a terminating pod', async () => {
    expect(
      kind(
        await recheckPod(linkerd, expectation, ports({ listSandboxes: async () => ({ ok: true, value: [] }) }), 5000),
      ),
    ).toBe('unknown:no-sandbox');
    const two = [
      { id: 'a', uid: 'uid-1', ready: true },
      { id: 'b', uid: 'uid-1', ready: true },
    ];
    expect(
      kind(
        await recheckPod(linkerd, expectation, ports({ listSandboxes: async () => ({ ok: true, value: two }) }), 5000),
      ),
    ).toBe('unknown:no-sandbox');
    const other = [{ id: 'a', uid: 'someone-else', ready: true }];
    expect(
      kind(
        await recheckPod(
          linkerd,
          expectation,
          ports({ listSandboxes: async () => ({ ok: true, value: other }) }),
          5000,
        ),
      ),
    ).toBe('unknown:no-sandbox');
    const down: RuntimeClient['listSandboxes'] = async () => ({
      ok: false,
      error: { reason: 'RuntimeUnreachable', message: 'ECONNREFUSED' },
    });
    expect(kind(await recheckPod(linkerd, expectation, ports({ listSandboxes: down }), 5000))).toBe(
      'unknown:runtime-unreachable',
    );
    const failed: ReadOutcome[] = [
      {
        kind: 'unreadable',
        command: 'nsenter --net=/run/netns/cni-1 iptables-nft-save',
        why: 'exit 1: nsenter: cannot open',
      },
      {
        kind: 'unreadable',
        command: 'nsenter --net=/run/netns/cni-1 nft -j list ruleset',
        why: 'exit 1: nsenter: cannot open',
      },
    ];
    expect(kind(await recheckPod(linkerd, expectation, ports({}, failed), 5000))).toBe('unknown:rules-unreadable');
    expect(
      kind(
        await recheckPod(
          view(pod({ deleting: true, init: ['linkerd-network-validator'] })),
          expectation,
          ports({}),
          5000,
        ),
      ),
    ).toBe('unknown:terminating');
  });
});
