import { describe, expect, it } from 'vitest';
import { admits, namespacePodSecurity } from '../../src/kube/pod-security-labels.js';

/** A namespace's labels as the API server's PodSecurity admission reads them (api.PolicyToEvaluate, v0.33.13). */
describe('namespacePodSecurity', () => {
  it('enforces privileged without a label, restricted for a word that is no level, and fails open for warn and audit', () => {
    expect(namespacePodSecurity({})).toEqual({
      enforce: 'privileged',
      invalidEnforce: undefined,
      enforceVersion: undefined,
      warn: 'privileged',
      audit: 'privileged',
    });
    expect(
      namespacePodSecurity({
        'pod-security.kubernetes.io/enforce': 'strict',
        'pod-security.kubernetes.io/warn': 'strict',
        'pod-security.kubernetes.io/audit': 'baseline',
      }),
    ).toEqual({
      enforce: 'restricted',
      invalidEnforce: 'strict',
      enforceVersion: undefined,
      warn: 'privileged',
      audit: 'baseline',
    });
  });

  it('notes an enforce-version other than latest', () => {
    const at = (version: string) =>
      namespacePodSecurity({
        'pod-security.kubernetes.io/enforce': 'baseline',
        'pod-security.kubernetes.io/enforce-version': version,
      });
    expect(at('latest').enforceVersion).toBeUndefined();
    expect(at('v1.25')).toMatchObject({ enforce: 'baseline', enforceVersion: 'v1.25' });
  });
});

describe('admits', () => {
  it('a level admits every pod that meets it or a stricter one', () => {
    const levels = ['privileged', 'baseline', 'restricted'] as const;
    const table = levels.map((enforced) => levels.map((needed) => admits(enforced, needed)));
    expect(table).toEqual([
      [true, true, true],
      [false, true, true],
      [false, false, true],
    ]);
  });
});
