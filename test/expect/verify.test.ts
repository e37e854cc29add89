import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRESETS, type InterceptionSpec } from '../../src/config/interception.js';
import { traceSpaces, verifyRuleset } from '../../src/expect/verify.js';
import type { Ruleset } from '../../src/rules/model.js';
import { analyzeDumps, type Dump } from '../../src/rules-check/analyze.js';
import { describeOutcome } from '../../src/trace/outcome.js';
import { CORPUS } from '../explain/corpus.js';
import { specFromFlags } from '../harness/spec.js';

// traceSpaces, the every-piece twin of verifyRuleset (the kernel tests compare it with real
// packets): the spaces it starts from, the expectations beside them, and the pieces it keeps.

const linkerd = readFileSync(`${CORPUS}/linkerd/cni-default/iptables-nft-save.v4.txt`, 'utf8');
const istioDrop = readFileSync(`${CORPUS}/istio/drop-invalid/iptables-nft-save.v4.txt`, 'utf8');

function rulesetOf(dumps: readonly Dump[], spec: InterceptionSpec): Ruleset {
  const analysis = analyzeDumps(spec, dumps, { families: ['ipv4'] });
  if (analysis.kind !== 'checked') throw new Error('the dumps must parse');
  return analysis.merged.ruleset;
}

describe('traceSpaces', () => {
  // Linkerd writes the same rules with ip6tables.
  const dumps: Dump[] = [
    { backend: 'iptables-nft', family: 'ipv4', source: 'v4', text: linkerd },
    { backend: 'iptables-nft', family: 'ipv6', source: 'v6', text: linkerd },
  ];
  const spec = PRESETS.linkerd.spec;
  const ruleset = rulesetOf(dumps, spec);

  it('one space per family and hook, output first, each with the expectations verifyRuleset checks', () => {
    const spaces = traceSpaces(ruleset, spec, ['ipv4', 'ipv6']);
    expect(spaces.map((space) => [space.scope.family, space.scope.hook])).toEqual([
      ['ipv4', 'output'],
      ['ipv4', 'prerouting'],
      ['ipv6', 'output'],
      ['ipv6', 'prerouting'],
    ]);
    const answers = verifyRuleset(ruleset, spec, ['ipv4', 'ipv6']).answers;
    expect(spaces.flatMap((space) => space.expectations.map((expectation) => expectation.id))).toEqual(
      answers.map((answer) => answer.expectation.id),
    );
    expect(spaces.map((space) => space.scope.atoms.patterns)).toEqual(Array(4).fill(['lo']));
  });

  it('every piece is kept, with where it went', () => {
    const [output, prerouting] = traceSpaces(ruleset, spec, ['ipv4']);
    const where = (pieces: NonNullable<typeof output>['pieces']) =>
      pieces.map(
        (piece) =>
          `${describeOutcome(piece.outcome)} @ ${piece.decidedBy?.chain ?? '-'} ${piece.decidedBy?.position ?? '-'}`,
      );
    expect(where(output?.pieces ?? [])).toEqual([
      'not redirected (original destination) @ PROXY_INIT_OUTPUT 1',
      'not redirected (original destination) @ PROXY_INIT_OUTPUT 2',
      'redirected to local port 4140 @ PROXY_INIT_OUTPUT 3',
    ]);
    expect(where(prerouting?.pieces ?? [])).toEqual([
      'not redirected (original destination) @ PROXY_INIT_REDIRECT 1',
      'redirected to local port 4143 @ PROXY_INIT_REDIRECT 2',
    ]);
  });

  it('the space a hook starts from: a local socket may carry any mark, an arriving packet none; TCP, new connections', () => {
    const [output, prerouting] = traceSpaces(ruleset, spec, ['ipv4']);
    expect(output?.space).toMatchObject({
      protocols: 1,
      mark: [{ care: 0, bits: 0 }],
      ctmark: [{ care: 0xffffffff, bits: 0 }],
      ctstates: 1,
      uid: [[0n, 0xffffffffn]],
      dport: [[1n, 65535n]],
      saddr: [[0n, 0xffffffffn]],
    });
    expect(prerouting?.space).toMatchObject({
      protocols: 1,
      mark: [{ care: 0xffffffff, bits: 0 }],
      ctstates: 1,
      iface: 3n,
    });
  });

  it('captured DNS adds UDP outbound; dropping INVALID adds that state inbound only; the configured interfaces cut the names', () => {
    const istio = specFromFlags([
      '--mesh=istio',
      '--drop-invalid',
      '--dns-capture',
      '--exclude-interfaces=eth9',
      '--reroute-interfaces=kv0',
    ]);
    const spaces = traceSpaces(
      rulesetOf([{ backend: 'iptables-nft', family: 'ipv4', source: 'istio', text: istioDrop }], istio),
      istio,
      ['ipv4'],
    );
    expect(spaces.map((space) => [space.space.protocols, space.space.ctstates])).toEqual([
      [3, 1],
      [1, 1 | 8],
    ]);
    expect(spaces[0]?.scope.atoms.patterns).toEqual(['eth9', 'kv0', 'lo']);
  });

  it("the work limit is the caller's: three units decide nothing", () => {
    const pieces = traceSpaces(ruleset, spec, ['ipv4'], 3).flatMap((space) => space.pieces);
    expect(pieces.some((piece) => piece.outcome.kind === 'unknown')).toBe(true);
    expect(
      traceSpaces(ruleset, spec, ['ipv4'])
        .flatMap((space) => space.pieces)
        .some((piece) => piece.outcome.kind === 'unknown'),
    ).toBe(false);
  });
});
