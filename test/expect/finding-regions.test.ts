import { describe, expect, it } from 'vitest';
import type { SpaceCheckResult } from '../../src/expect/space-check.js';
import type { Finding } from '../../src/expect/finding.js';
import { reportOf } from '../../src/rules-check/report.js';
import { analyseLinkerd, linkerd, REDIRECT_OUT } from './linkerd-dump.js';

// A finding keeps a bounded number of regions (merging them is quadratic), but what it names must
// be every packet at fault: a finding that named a corner of them would send an operator to the
// wrong rule. Linkerd's own rules (linkerd2-proxy-init, cni-default) with rules added before its
// ignore-proxy-user RETURN, as a second tool or an operator would add them.

const FIRST_RULE = '-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102';

const check = (text: string): SpaceCheckResult => analyseLinkerd(text).check;

/** Linkerd's dump with `rules` in place of its outbound REDIRECT (after the proxy's and loopback's RETURNs). */
const insteadOfRedirect = (rules: readonly string[]): string =>
  linkerd.replace(`${REDIRECT_OUT}\n`, rules.map((rule) => `${rule}\n`).join(''));

/** `text` with an empty user chain NOOP declared. */
const withNoop = (text: string): string =>
  text.replace(':PROXY_INIT_OUTPUT - [0:0]', ':PROXY_INIT_OUTPUT - [0:0]\n:NOOP - [0:0]');

/** Linkerd's dump with `rules` first in PROXY_INIT_OUTPUT, and an empty user chain NOOP declared. */
const withRulesFirst = (text: string, rules: readonly string[]): string =>
  withNoop(text).replace(FIRST_RULE, `${rules.join('\n')}\n${FIRST_RULE}`);

/** `count` REDIRECTs, each for its own odd /16 of 10.0.0.0/8 and its own port: their pieces never merge. */
const ownPortRedirects = (count: number): string[] =>
  Array.from(
    { length: count },
    (_, index) =>
      `-A PROXY_INIT_OUTPUT -d 10.${2 * index + 1}.0.0/16 -p tcp -m tcp --dport ${1000 + 2 * index} -j REDIRECT --to-ports 4140`,
  );

/** `count` jumps to NOOP, each for its own even /16 from `firstOctet`.0.0.0 on: each cuts the packets once more. */
const jumpsToNoop = (count: number, firstOctet = 10): string[] =>
  Array.from(
    { length: count },
    (_, index) => `-A PROXY_INIT_OUTPUT -d ${firstOctet + Math.floor(index / 128)}.${2 * (index % 128)}.0.0/16 -j NOOP`,
  );

/** The result's one finding; fails the test if it has none or several. */
function onlyFinding(result: SpaceCheckResult): Finding {
  expect(result.findings).toHaveLength(1);
  return result.findings[0] as Finding;
}

const noRedirect = linkerd.replace(`${REDIRECT_OUT}\n`, '');
const WHOLE =
  'outbound TCP to any address but 127.0.0.0/8, any port, from any uid but 2102, via any interface but lo, is not redirected (original destination) (the policy of nat OUTPUT (iptables-nft, ip): `policy ACCEPT of OUTPUT`); expected redirected to local port 4140 because outbound TCP from the application is captured';

describe('a finding names every packet at fault, whatever the number of pieces the tracer cut it into', () => {
  it('the outbound REDIRECT removed: one finding, all outbound TCP', () => {
    expect(check(noRedirect).findings.map((finding) => finding.message)).toEqual([WHOLE]);
  });

  it('100 jumps to an empty chain cut the same packets into 101 pieces: still all outbound TCP', () => {
    const result = check(withRulesFirst(noRedirect, jumpsToNoop(100)));
    expect(result.status).toBe('failed');
    expect(result.findings.map((finding) => finding.message)).toEqual([WHOLE]);
    expect(result.findings[0]?.unlistedRegions).toBe(0);
  });

  it('100 REDIRECTs for disjoint /16s: one finding, naming every address but those 100 (and loopback)', () => {
    const redirects = Array.from(
      { length: 100 },
      (_, index) => `-A PROXY_INIT_OUTPUT -d 10.${2 * index + 1}.0.0/16 -p tcp -j REDIRECT --to-ports 4140`,
    );
    const result = check(insteadOfRedirect(redirects));
    expect(result.status).toBe('failed');
    const finding = onlyFinding(result);
    // Every address but loopback and the 100 odd /16s of 10.0.0.0/9: 0.0.0.0/5, 8.0.0.0/7, the 100
    // even /16s, 3 CIDRs for 10.200-255, 10 from 11.0.0.0/8 to 126.0.0.0/8, and 128.0.0.0/1.
    expect(finding.message).toBe(
      `outbound TCP to 0.0.0.0/5, 8.0.0.0/7, 10.0.0.0/16, 10.2.0.0/16, 10.4.0.0/16, 10.6.0.0/16, ... (116 in all), any port, ${WHOLE.slice(WHOLE.indexOf('from any uid'))}`,
    );
    expect(finding.regions).toHaveLength(1);
    expect(finding.unlistedRegions).toBe(0);
  });

  it('100 REDIRECTs, each for its own /16 and port: the 101 regions left do not merge; 64 are listed and the other 37 counted, in the sentence and the report', () => {
    const analysis = analyseLinkerd(insteadOfRedirect(ownPortRedirects(100)));
    expect(analysis.check.status).toBe('failed');
    const finding = onlyFinding(analysis.check);
    // One piece per REDIRECT (its /16, any port but its own) and one for every other address.
    expect(finding.regions).toHaveLength(64);
    expect(finding.unlistedRegions).toBe(37);
    expect(finding.message).toContain(
      'outbound TCP to 10.1.0.0/16, any port but 1000, from any uid but 2102, via any interface but lo; and outbound TCP to 10.3.0.0/16, any port but 1002,',
    );
    expect(finding.message).toContain(
      '; and up to 98 more region(s), is not redirected (original destination) (the policy of nat OUTPUT',
    );
    const [reported] = reportOf(analysis).findings;
    expect(reported?.regions).toHaveLength(finding.regions.length);
    expect(reported?.unlistedRegions).toBe(finding.unlistedRegions);
  });
});

describe('a finding keeps merging its regions while they merge, and stops only when they no longer do', () => {
  it('200 jumps to an empty chain: 201 pieces, merged to one region each time 64 are kept, so none is only counted', () => {
    const result = check(withRulesFirst(noRedirect, jumpsToNoop(200)));
    expect(result.findings.map((finding) => finding.message)).toEqual([WHOLE]);
    expect(result.findings[0]?.regions).toHaveLength(1);
    expect(result.findings[0]?.unlistedRegions).toBe(0);
  });

  /** `pairs` pairs of REDIRECTs, each pair for two /16s and the same port of its own: the pieces merge two by two. */
  const pairedRedirects = (pairs: number): string[] =>
    Array.from(
      { length: 2 * pairs },
      (_, index) =>
        `-A PROXY_INIT_OUTPUT -d 10.${2 * index + 1}.0.0/16 -p tcp -m tcp --dport ${1000 + 2 * Math.floor(index / 2)} -j REDIRECT --to-ports 4140`,
    );

  it('50 pairs of REDIRECTs: the first 64 pieces merge to exactly 32 regions, which is not yet too many to merge again; all 51 regions named', () => {
    const result = check(insteadOfRedirect(pairedRedirects(50)));
    const finding = onlyFinding(result);
    expect(finding.regions).toHaveLength(51);
    expect(finding.unlistedRegions).toBe(0);
    expect(finding.message).toContain(
      'outbound TCP to 10.1.0.0/16, 10.3.0.0/16, any port but 1000, from any uid but 2102',
    );
    expect(finding.message).toContain('; and 48 more region(s), is not redirected');
  });
});

describe('once its kept regions stop merging, a finding stops merging: later pieces are counted, bounding its work', () => {
  it('40 REDIRECTs each for its own /16 and port, then 100 jumps to an empty chain: the first 64 pieces merge to 41 regions, too many to merge again, so 54 of the 101 jump pieces are only counted', () => {
    const result = check(withNoop(insteadOfRedirect([...ownPortRedirects(40), ...jumpsToNoop(100, 11)])));
    expect(result.status).toBe('failed');
    const finding = onlyFinding(result);
    // 40 REDIRECT pieces and 24 jump pieces merge to 41; 23 more are kept, the last 54 counted. The
    // 23 merge with the first jump region when the finding is made, so 41 regions are named.
    expect(finding.regions).toHaveLength(41);
    expect(finding.unlistedRegions).toBe(54);
    expect(finding.message).toContain(
      'outbound TCP to 10.1.0.0/16, any port but 1000, from any uid but 2102, via any interface but lo; and ',
    );
    expect(finding.message).toContain('; and up to 92 more region(s), is not redirected (original destination)');
  });
});
