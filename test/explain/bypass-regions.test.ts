import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { CORPUS } from './corpus.js';

/**
 * Issue 9: each line, inserted first in Linkerd's own chains (corpus case linkerd/cni-default),
 * lets a whole region bypass the proxy. A sample packet per expectation missed every one of them.
 */
const LINKERD = readFileSync(path.join(CORPUS, 'linkerd/cni-default/iptables-nft-save.v4.txt'), 'utf8');
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-bypass-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function insertFirst(chain: string, rule: string): string {
  const lines = LINKERD.split('\n');
  const at = lines.findIndex((line) => line.startsWith(`-A ${chain} `));
  lines.splice(at, 0, `-A ${chain} ${rule}`);
  return lines.join('\n');
}

async function explainText(text: string, format: 'text' | 'json', extra: readonly string[] = []) {
  const file = path.join(scratch, `${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(file, text);
  return runExplain(['--mesh=linkerd', `--iptables-save=${file}`, `--format=${format}`, ...extra], {});
}

const BYPASSES: ReadonlyArray<{ chain: string; rule: string; region: string }> = [
  {
    chain: 'PROXY_INIT_OUTPUT',
    rule: '-d 10.0.0.0/8 -j RETURN',
    region: 'outbound TCP to 10.0.0.0/8, any port, from any uid but 2102',
  },
  { chain: 'PROXY_INIT_OUTPUT', rule: '-p tcp -m tcp --dport 443 -j RETURN', region: 'port 443' },
  {
    chain: 'PROXY_INIT_OUTPUT',
    rule: '-p tcp -m multiport --dports 1:79,81:65535 -j RETURN',
    region: 'any port but 80',
  },
  { chain: 'PROXY_INIT_OUTPUT', rule: '-m owner --uid-owner 0 -j RETURN', region: 'from uid 0' },
  {
    chain: 'PROXY_INIT_REDIRECT',
    rule: '-p tcp -m tcp --dport 8080 -j RETURN',
    region: 'inbound TCP from any address to port 8080',
  },
  { chain: 'PROXY_INIT_REDIRECT', rule: '-s 10.0.0.0/8 -j RETURN', region: 'inbound TCP from 10.0.0.0/8' },
];

describe('issue 9: a rule that lets a region bypass the proxy fails, naming the region', () => {
  for (const { chain, rule, region } of BYPASSES) {
    it(`${chain}: ${rule}`, async () => {
      const result = await explainText(insertFirst(chain, rule), 'text');
      expect(result.exitCode, result.stdout).toBe(95);
      expect(result.stdout).toContain('FAILED');
      expect(result.stdout).toContain(region);
      expect(result.stdout).toContain(`rule 1 of nat ${chain}`);
      expect(result.stdout).toContain(rule.split(' -j ')[0] as string);
    });
  }

  it('the JSON report carries the region as data', async () => {
    const result = await explainText(insertFirst('PROXY_INIT_OUTPUT', '-d 10.0.0.0/8 -j RETURN'), 'json');
    const report = JSON.parse(result.stdout) as {
      status: string;
      findings: Array<{ region: { daddr: string[]; dport: string[]; uid: string[] } }>;
    };
    expect(report.status).toBe('failed');
    const finding = report.findings[0];
    expect(finding?.region.daddr).toEqual(['10.0.0.0/8']);
    expect(finding?.region.dport).toEqual(['1-65535']);
    expect(finding?.region.uid).toEqual(['0-2101', '2103-4294967295']);
  });

  it('a configured exclusion is exactly that region: /8 passes, /7 and /9 fail', async () => {
    const exclusion = ['--exclude-outbound-cidrs=10.0.0.0/8'];
    expect(
      (await explainText(insertFirst('PROXY_INIT_OUTPUT', '-d 10.0.0.0/8 -j RETURN'), 'text', exclusion)).exitCode,
    ).toBe(0);
    const wider = await explainText(insertFirst('PROXY_INIT_OUTPUT', '-d 10.0.0.0/7 -j RETURN'), 'text', exclusion);
    expect(wider.exitCode).toBe(95);
    expect(wider.stdout).toContain('outbound TCP to 11.0.0.0/8');
    const narrower = await explainText(insertFirst('PROXY_INIT_OUTPUT', '-d 10.0.0.0/9 -j RETURN'), 'text', exclusion);
    expect(narrower.exitCode).toBe(95);
    expect(narrower.stdout).toContain('outbound TCP to 10.128.0.0/9');
    expect(narrower.stdout).toContain('is redirected to local port 4140');
  });
});

describe('issue 7 item 6: jump and goto loops end with a clear answer', () => {
  const loop = [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':A - [0:0]',
    ':B - [0:0]',
    '-A OUTPUT -j A',
    '-A A -g B',
    '-A B -g A',
    'COMMIT',
    '',
  ];
  it('a goto loop is reported as a loop, in text and JSON', async () => {
    const text = await explainText(loop.join('\n'), 'text');
    expect(text.exitCode).toBe(95);
    expect(text.stdout).toContain('loop');
    const json = await explainText(loop.join('\n'), 'json');
    expect(json.exitCode).toBe(95);
    const report = JSON.parse(json.stdout) as { status: string; findings: Array<{ reason: string; message: string }> };
    expect(report.status).not.toBe('passed');
    expect(
      report.findings.some((finding) => finding.reason === 'RulesUnknownMatch' && finding.message.includes('loop')),
    ).toBe(true);
  });

  it('unknown matches in front of a loop do not multiply the work past the global bound', async () => {
    const unknowns = Array.from(
      { length: 5 },
      (_, i) =>
        `-A OUTPUT -m addrtype --dst-type LOCAL -m comment --comment "u${i}" -j MARK --set-xmark 0x${i + 1}/0xff`,
    );
    const lines = [...loop];
    lines.splice(5, 0, ...unknowns);
    const json = await explainText(lines.join('\n'), 'json');
    expect(json.exitCode).toBe(95);
    const report = JSON.parse(json.stdout) as { status: string; findings: Array<{ reason: string; message: string }> };
    expect(
      report.findings.some(
        (finding) => finding.reason === 'RulesUnknownMatch' && finding.message.includes('enters a loop (A -> B -> A)'),
      ),
    ).toBe(true);
  });
});
