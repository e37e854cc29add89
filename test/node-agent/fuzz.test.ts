import { describe, expect, it } from 'vitest';
import { helpOrVersion } from '../../src/cli/help-command.js';
import { runNodeCommand } from '../../src/cli/commands/node/run.js';
import { blockedOf } from '../../src/node-agent/blocked.js';
import { podViewOf } from '../../src/node-agent/pod-view.js';
import { crashLoopPod, failedJobPod } from '../harness/kube-api/pods.js';
import { prng } from '../harness/prng.js';

const TOKENS = [
  '--node-name',
  '--mesh',
  '--action',
  '--taint',
  '--taint=false',
  '--breaker-window',
  '--breaker-threshold',
  '--listen',
  '--max-recreations',
  '--failure-exit-code',
  '--container-name',
  '--label-selector',
  '--writes-per-second',
  '--help',
  '--',
  '-x',
  'linkerd',
  'istio',
  'delete',
  'none',
  '0',
  '-1',
  '99999999999',
  '1e3',
  '10s',
  '0.01ms',
  'ï',
  '',
  ' ',
  '127.0.0.1:0',
  ':::',
  'node-a',
  '--node-name=',
  '--mesh=generic',
];

describe('fuzz (seeded)', () => {
  it('any command line ends in help (0), bad flags (64) or no cluster (66), and never throws', async () => {
    const random = prng(1101);
    const pick = () => TOKENS[Math.floor(random() * TOKENS.length)]!;
    const seen = new Set<number>();
    for (let round = 0; round < 400; round++) {
      const argv = Array.from({ length: Math.floor(random() * 7) }, pick);
      const env =
        random() < 0.5 ? { NODE_NAME: pick() } : { INTERLOCK_MESH: pick(), KUBECONFIG: '/nonexistent/interlock-fuzz' };
      // As run-cli does: --help is answered from the command table before the command runs.
      const result = helpOrVersion('node', argv, 80) ?? (await runNodeCommand(argv, env, AbortSignal.abort()));
      expect([0, 64, 66], JSON.stringify({ argv, env, result })).toContain(result.exitCode);
      if (result.exitCode === 64) expect(result.stderr).toMatch(/^interlock node: /);
      seen.add(result.exitCode);
    }
    expect([...seen].sort()).toEqual([0, 64, 66]);
  });

  it('any reshaped pod gives a view or none, and blocked or not, never a throw', () => {
    const random = prng(1102);
    const values = [null, 0, 95, -1, '', 'x', [], {}, true, 'PodNetworkMissing: x', { terminated: { exitCode: 95 } }];
    const paths = [
      'metadata',
      'metadata.ownerReferences',
      'spec.initContainers',
      'status',
      'status.initContainerStatuses',
      'status.initContainerStatuses.0',
      'status.initContainerStatuses.0.state',
      'status.initContainerStatuses.0.lastState',
      'status.initContainerStatuses.0.lastState.terminated',
      'status.initContainerStatuses.0.lastState.terminated.exitCode',
      'status.initContainerStatuses.0.lastState.terminated.message',
      'status.initContainerStatuses.0.state.terminated.message',
    ];
    for (let round = 0; round < 2000; round++) {
      const pod = structuredClone(random() < 0.5 ? crashLoopPod({ name: 'f' }) : failedJobPod({ name: 'f' })) as Record<
        string,
        unknown
      >;
      for (let edits = 0; edits < 3; edits++) {
        const steps = paths[Math.floor(random() * paths.length)]!.split('.');
        // Arrays too are reached by key ('0'): every object here is a JSON object or array.
        let at: unknown = pod;
        for (const step of steps.slice(0, -1))
          at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[step] : undefined;
        if (at !== null && typeof at === 'object')
          (at as Record<string, unknown>)[steps[steps.length - 1]!] = values[Math.floor(random() * values.length)];
      }
      const view = podViewOf(pod, 'linkerd-network-validator');
      if (view) expect(() => blockedOf(view, 95)).not.toThrow();
    }
  });
});
