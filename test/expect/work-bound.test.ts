import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../src/config/interception.js';
import { analyzeDumps } from '../../src/rules-check/analyze.js';

// Hostile tables that are correct for Linkerd (every extra RETURN is for the proxy's own uid),
// so only the work bound can stop them from passing. Their sizes pass the input caps; the time
// they take is measured by `npm run bench`, never asserted here.

/** RETURNs of scattered /32s: the region that goes on down the chain gains one interval per rule. */
function scatteredReturns(count: number): string {
  const lines = [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':PROXY_INIT_OUTPUT - [0:0]',
    ':PROXY_INIT_REDIRECT - [0:0]',
  ];
  lines.push('-A PREROUTING -j PROXY_INIT_REDIRECT', '-A OUTPUT -j PROXY_INIT_OUTPUT');
  for (let i = 0; i < count; i++) {
    const v = i * 2;
    lines.push(
      `-A PROXY_INIT_OUTPUT -d 10.${(v >> 16) & 255}.${(v >> 8) & 255}.${v & 255}/32 -m owner --uid-owner 2102 -j RETURN`,
    );
  }
  lines.push(
    '-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102 -j RETURN',
    '-A PROXY_INIT_OUTPUT -o lo -j RETURN',
    '-A PROXY_INIT_OUTPUT -p tcp -j REDIRECT --to-ports 4140',
  );
  lines.push(
    '-A PROXY_INIT_REDIRECT -p tcp -m multiport --dports 4190,4191 -j RETURN',
    '-A PROXY_INIT_REDIRECT -p tcp -j REDIRECT --to-ports 4143',
    'COMMIT',
    '',
  );
  return lines.join('\n');
}

function analyse(text: string, workLimit?: number) {
  const analysis = analyzeDumps(
    PRESETS.linkerd.spec,
    [{ backend: 'iptables-nft', family: 'ipv4', source: 'hostile', text }],
    { families: ['ipv4'], ...(workLimit ? { workLimit } : {}) },
  );
  if (analysis.kind !== 'checked') throw new Error('the hostile table must parse');
  return analysis.check;
}

describe('the analysis work bound', () => {
  it('a small table of the same shape passes: the rules themselves are correct', () => {
    expect(analyse(scatteredReturns(200)).status).toBe('passed');
  });

  it('20,000 scattered RETURNs hit the default bound and answer unknown, naming the work limit', () => {
    const check = analyse(scatteredReturns(20_000));
    expect(check.status).toBe('unknown');
    expect(check.findings.length).toBeGreaterThan(0);
    expect(check.findings.every((finding) => finding.reason === 'RulesUnknownMatch')).toBe(true);
    expect(check.findings.some((finding) => finding.message.includes('work limit'))).toBe(true);
  });

  it('copying long interval lists is charged: a budget that covers the rule visits alone is not enough', () => {
    // 2,000 rules make about 20k visits and splits, but ~2M interval copies.
    const check = analyse(scatteredReturns(2_000), 40_000);
    expect(check.status).toBe('unknown');
    expect(analyse(scatteredReturns(2_000)).status).toBe('passed');
  });

  it('findings beyond those kept are counted, and a mismatch among them still fails the check', () => {
    const text = scatteredReturns(1).replace(
      '-m owner --uid-owner 2102 -j RETURN\n-A PROXY_INIT_OUTPUT -m owner',
      '-j RETURN\n-A PROXY_INIT_OUTPUT -m owner',
    );
    const many = Array.from(
      { length: 600 },
      (_, i) => `-A PROXY_INIT_OUTPUT -d 10.9.${i >> 8}.${i & 255}/32 -p tcp -m tcp --dport ${i + 1} -j RETURN`,
    );
    const check = analyse(
      text.replace(
        '-A PROXY_INIT_OUTPUT -o lo -j RETURN',
        [...many, '-A PROXY_INIT_OUTPUT -o lo -j RETURN'].join('\n'),
      ),
    );
    expect(check.status).toBe('failed');
    expect(check.findings.length).toBeLessThanOrEqual(512);
    expect(check.omittedFindings).toBeGreaterThan(0);
  });
});

/** RETURNs of scattered sources into scattered /24s: regions split in two dimensions at once. */
function scatteredSources(count: number): string {
  return scatteredReturns(count).replace(
    /^-A PROXY_INIT_OUTPUT -d 10\.(\d+)\.(\d+)\.(\d+)\/32 /gm,
    (_, a: string, b: string, c: string) =>
      `-A PROXY_INIT_OUTPUT -s 10.${a}.${b}.${c}/32 -d 10.${(Number(c) * 37) & 255}.${(Number(b) * 11) & 255}.0/24 `,
  );
}

describe('the analysis deadline (the validator verdict is due by --timeout; the analysis blocks its timers)', () => {
  it('a clock past the deadline stops a hostile table with RulesUnknownMatch naming the deadline', () => {
    let reads = 0;
    const analysis = analyzeDumps(
      PRESETS.linkerd.spec,
      [{ backend: 'iptables-nft', family: 'ipv4', source: 'hostile', text: scatteredSources(20_000) }],
      // A fake clock: one tick per read, the deadline three reads in (about 12k work units).
      { families: ['ipv4'], deadline: { at: 3, now: () => reads++ } },
    );
    if (analysis.kind !== 'checked') throw new Error('the hostile table must parse');
    const { check } = analysis;
    expect(check.status).toBe('unknown');
    expect(check.findings.every((finding) => finding.reason === 'RulesUnknownMatch')).toBe(true);
    expect(check.findings.some((finding) => finding.message.includes('deadline'))).toBe(true);
    // Stopped at once, not after the work limit: the clock was read a handful of times only.
    expect(reads).toBeLessThan(10);
  });

  it('a deadline never reached changes nothing: a correct table still passes', () => {
    const analysis = analyzeDumps(
      PRESETS.linkerd.spec,
      [{ backend: 'iptables-nft', family: 'ipv4', source: 'small', text: scatteredSources(200) }],
      { families: ['ipv4'], deadline: { at: Number.POSITIVE_INFINITY, now: () => 0 } },
    );
    expect(analysis.kind === 'checked' && analysis.check.status).toBe('passed');
  });
});
