import { afterAll, describe, expect, it } from 'vitest';
import { expectationOf } from '../../../src/node-agent/recheck/expectations.js';
import { namespaceMetaOf, recheckPodOf, type RecheckPod } from '../../../src/node-agent/recheck/meshed-pod.js';
import { readPodRules } from '../../../src/node-agent/recheck/netns-rules.js';
import { decideInspection } from '../../../src/rules-check/decide.js';
import { ambientAnnotationsRead } from '../../../src/mesh/istio-ambient.js';
import {
  flushAll,
  loadIptablesGolden,
  loadNftGolden,
  ambientGoldens,
  type AmbientGolden,
} from '../../ambient/goldens.js';
import { makeNamespace, removeNamespace } from '../../ambient/dumps.js';

// istio-cni's own goldens of every tag, loaded by the real tools into a namespace, read by the
// re-check's own reader (nsenter children) and judged with the expectation it gives an ambient pod.
// Only the IPv4 pod configurations the preset models: the upstream tests' IPv6 cases use a test
// host-probe address, ingress and virtual-interface cases are per-pod settings the agent cannot see.
const namespace = makeNamespace('amb-recheck');
afterAll(() => removeNamespace(namespace));
const netns = `/run/netns/${namespace}`;

const POD: RecheckPod = recheckPodOf({
  metadata: { name: 'web', namespace: 'shop', uid: 'u1', labels: { 'istio.io/dataplane-mode': 'ambient' } },
  spec: { containers: [{ name: 'app' }] },
  status: { phase: 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] },
})!;

const modelled = (golden: AmbientGolden): boolean => /^(default|dns_pod_\w+_globally)$/.test(golden.name);

async function verdict(): Promise<string[]> {
  const expectation = expectationOf('istio-ambient', POD, namespaceMetaOf({}));
  if (expectation.kind !== 'spec') throw new Error(expectation.why);
  const outcomes = await readPodRules(netns, expectation.families, 5_000);
  return expectation.specs.map(
    (spec) => decideInspection(spec, outcomes, { families: expectation.families, mode: 'required' }).status,
  );
}

function load(golden: AmbientGolden): void {
  flushAll(namespace);
  if (golden.backend === 'nftables') loadNftGolden(namespace, golden);
  else loadIptablesGolden(namespace, golden, 'nft');
}

describe("the re-check judges an ambient pod's rules as istio-cni writes them, every tag", () => {
  const goldens = ambientGoldens().filter(modelled);

  it('covers every tag and both backends', () => {
    expect(new Set(goldens.map((golden) => golden.tag)).size).toBe(10);
    expect(goldens.some((golden) => golden.backend === 'nftables')).toBe(true);
  });

  for (const golden of goldens)
    it(`${golden.tag} ${golden.backend}/${golden.name}: captured in one variant; flushed, lost in all`, async () => {
      load(golden);
      expect(await verdict()).toContain('passed');
      flushAll(namespace);
      const flushed = await verdict();
      expect(flushed.every((status) => status === 'failed')).toBe(true);
    });

  it('a golden with its outbound REDIRECT to 15001 removed is lost in every variant', async () => {
    const golden = goldens.find((g) => g.tag === '1.25.0' && g.backend === 'iptables' && g.name === 'default')!;
    const cut = golden.text
      .split('\n')
      .filter((line) => !/--to-ports 15001\b/.test(line))
      .join('\n');
    expect(cut).not.toBe(golden.text);
    flushAll(namespace);
    loadIptablesGolden(namespace, { ...golden, text: cut }, 'nft');
    expect((await verdict()).every((status) => status === 'failed')).toBe(true);
  });
});

describe("the re-check reads an ambient pod's annotations as the node's istio-cni version does", () => {
  // istio-cni 1.24 reads neither dns-capture nor reroute-virtual-interfaces (facts/istio-ambient.json):
  // its default golden is what it writes for a pod carrying them. The newest reading expects the
  // rerouted interface's rule and finds the pod lost; 1.24's (`node --istio-cni-version 1.24`) does not.
  const annotated: RecheckPod = recheckPodOf({
    metadata: {
      name: 'web',
      namespace: 'shop',
      uid: 'u2',
      labels: { 'istio.io/dataplane-mode': 'ambient' },
      annotations: { 'istio.io/reroute-virtual-interfaces': 'fake1s0f0', 'ambient.istio.io/dns-capture': 'true' },
    },
    spec: { containers: [{ name: 'app' }] },
    status: { phase: 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] },
  })!;

  async function statuses(version?: readonly [number, number]): Promise<string[]> {
    const expectation = expectationOf('istio-ambient', annotated, namespaceMetaOf({}), ambientAnnotationsRead(version));
    if (expectation.kind !== 'spec') throw new Error(expectation.why);
    const outcomes = await readPodRules(netns, expectation.families, 5_000);
    return expectation.specs.map(
      (spec) => decideInspection(spec, outcomes, { families: expectation.families, mode: 'required' }).status,
    );
  }

  it('1.24.0 default golden: captured as 1.24 reads the pod, lost as the newest would', async () => {
    const golden = ambientGoldens().find(
      (g) => g.tag === '1.24.0' && g.backend === 'iptables' && g.name === 'default',
    )!;
    load(golden);
    expect(await statuses([1, 24])).toContain('passed');
    expect((await statuses()).every((status) => status === 'failed')).toBe(true);
  });
});
