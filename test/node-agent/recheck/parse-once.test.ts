import { describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { corpusFile } from '../../harness/pod-namespace.js';
import { namespaceMetaOf, recheckPodOf } from '../../../src/node-agent/recheck/meshed-pod.js';
import { expectationOf } from '../../../src/node-agent/recheck/expectations.js';
import { analysePod, IN_THREAD_MAX_BYTES } from '../../../src/node-agent/recheck/pod-analysis.js';
import { podShareMs } from '../../../src/node-agent/recheck/sweep.js';
import type { AnalysisWorkers } from '../../../src/node-agent/recheck/worker-analysis.js';
import type { ReadOutcome } from '../../../src/rules/read/classify.js';
import { decideVariants } from '../../../src/rules-check/decide.js';
import * as analyze from '../../../src/rules-check/analyze.js';

// Issue #43, item 4: an ambient pod is checked against every chart-wide variant the agent cannot
// see (four); its dumps are parsed once for all of them, not once per variant.
vi.mock('../../../src/rules-check/analyze.js', { spy: true });

const POD = recheckPodOf({
  metadata: { name: 'web', namespace: 'shop', uid: 'u1', labels: { 'istio.io/dataplane-mode': 'ambient' } },
  spec: { containers: [{ name: 'app' }] },
  status: { phase: 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] },
})!;

describe('the re-check parses a pod’s dumps once for every variant', () => {
  it('four ambient variants, one parse, answers in order until one passes', () => {
    const expectation = expectationOf('istio-ambient', POD, namespaceMetaOf({}));
    if (expectation.kind !== 'spec') throw new Error(expectation.why);
    expect(expectation.specs).toHaveLength(4);
    // No variant passes on an empty ruleset: every one is checked, against one parse.
    const empty: ReadOutcome[] = [
      { kind: 'read', dump: { backend: 'iptables-nft', family: 'ipv4', source: 'iptables-nft-save', text: '' } },
    ];
    vi.mocked(analyze.parseDumps).mockClear();
    const answers = decideVariants(expectation.specs, empty, { families: ['ipv4'], mode: 'required' }, () => false);
    expect(answers.map((answer) => answer.status)).toEqual(['failed', 'failed', 'failed', 'failed']);
    expect(analyze.parseDumps).toHaveBeenCalledTimes(1);
    expect(analyze.verifyParsed).toHaveBeenCalledTimes(4);
  });

  it('stops at the first variant that passes', () => {
    const linkerd = recheckPodOf({
      metadata: { name: 'web', namespace: 'shop', uid: 'u2' },
      spec: { initContainers: [{ name: 'linkerd-network-validator' }], containers: [{ name: 'app' }] },
      status: { phase: 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] },
    })!;
    const expectation = expectationOf('linkerd', linkerd, namespaceMetaOf({}));
    if (expectation.kind !== 'spec') throw new Error(expectation.why);
    const text = readFileSync(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'utf8');
    const read: ReadOutcome[] = [
      { kind: 'read', dump: { backend: 'iptables-nft', family: 'ipv4', source: 'iptables-nft-save', text } },
    ];
    const specs = [expectation.specs[0]!, expectation.specs[0]!];
    const answers = decideVariants(
      specs,
      read,
      { families: ['ipv4'], mode: 'required' },
      (answer) => answer.status === 'passed',
    );
    expect(answers.map((answer) => answer.status)).toEqual(['passed']);
  });
});

describe('each pod gets at most its share of a sweep', () => {
  const settings = { concurrency: 4, podDeadlineMs: 5000 };
  it('its own deadline while the sweep has room, the share when it has not, never under 1 s', () => {
    expect(podShareMs({ ...settings, sweepBudgetMs: 60_000 }, 16)).toBe(5000);
    expect(podShareMs({ ...settings, sweepBudgetMs: 60_000 }, 80)).toBe(3000);
    expect(podShareMs({ ...settings, sweepBudgetMs: 8000 }, 110)).toBe(1000);
    expect(podShareMs(settings, 110)).toBe(5000);
  });
});

describe('a pod’s few KB of rules are judged on the event loop, anything larger in a worker', () => {
  const linkerd = recheckPodOf({
    metadata: { name: 'web', namespace: 'shop', uid: 'u3' },
    spec: { initContainers: [{ name: 'linkerd-network-validator' }], containers: [{ name: 'app' }] },
    status: { phase: 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] },
  })!;
  const expectation = expectationOf('linkerd', linkerd, namespaceMetaOf({}));
  const specs = expectation.kind === 'spec' ? expectation.specs : [];
  const read = (text: string): ReadOutcome[] => [
    { kind: 'read', dump: { backend: 'iptables-nft', family: 'ipv4', source: 'iptables-nft-save', text } },
  ];
  const sent: number[] = [];
  const workers = {
    analyse: async (request: { outcomes: readonly ReadOutcome[] }) => {
      sent.push(request.outcomes.length);
      return { kind: 'deadline' as const, ms: 1 };
    },
  } as unknown as AnalysisWorkers;

  it('the corpus table on the event loop; over 64 KiB to the worker', async () => {
    const text = readFileSync(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'utf8');
    const small = await analysePod(
      workers,
      { specs, outcomes: read(text), families: ['ipv4'], remainingMs: 5000 },
      5000,
    );
    expect(small.kind === 'answered' && small.answer.inspections.map((answer) => answer.status)).toEqual(['passed']);
    expect(sent).toEqual([]);
    const large = `${text}${'#'.repeat(IN_THREAD_MAX_BYTES)}\n`;
    const big = await analysePod(
      workers,
      { specs, outcomes: read(large), families: ['ipv4'], remainingMs: 5000 },
      5000,
    );
    expect(big).toEqual({ kind: 'deadline', ms: 1 });
    expect(sent).toEqual([1]);
  });
});
