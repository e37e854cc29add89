import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseNetworkSelections } from '../../src/cni/network-selection.js';

/**
 * Every value Multus's docs, Istio's and Kuma's injector goldens (and a few edges of ours) put in
 * k8s.v1.cni.cncf.io/networks, with multus-cni v4.2.2's own GetPodNetwork answer for it
 * (test/fixtures/cni/nad/sources.json): the parser answers the same, value for value.
 */
interface Answer {
  readonly path: string;
  readonly podNamespace: string;
  readonly value: string;
  readonly selections?: readonly { namespace: string; name: string; interface?: string }[];
  readonly error?: string;
}
const ANSWERS = JSON.parse(
  readFileSync(new URL('../fixtures/cni/nad/multus-annotations.json', import.meta.url), 'utf8'),
) as Answer[];

describe("the pod's network annotation, parsed as Multus v4.2.2 parses it", () => {
  it('covers both forms, the refusals and the three injectors', () => {
    expect(ANSWERS.length).toBeGreaterThanOrEqual(20);
    expect(ANSWERS.some((answer) => answer.value.startsWith('['))).toBe(true);
    expect(ANSWERS.filter((answer) => answer.error !== undefined).length).toBeGreaterThanOrEqual(5);
    expect(ANSWERS.map((answer) => answer.value)).toEqual(
      expect.arrayContaining(['default/istio-cni', 'kuma-cni', 'alt_cni, default/istio-cni']),
    );
  });

  for (const answer of ANSWERS)
    it(`${answer.path}: ${JSON.stringify(answer.value)}`, () => {
      const parsed = parseNetworkSelections(answer.value, answer.podNamespace);
      if (answer.error !== undefined) {
        expect(parsed.ok).toBe(false);
        return;
      }
      expect(parsed).toEqual({ ok: true, selections: answer.selections ?? [] });
    });

  it('the empty value is no request at all (Multus: "no kubernetes network found")', () => {
    expect(parseNetworkSelections('', 'app').ok).toBe(false);
  });
});
