import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { corpusFile } from '../harness/pod-namespace.js';

/**
 * Rules whose side effects the model once took for "continue": each hides a bypass, or an effect
 * the model cannot decide, behind a rule that looks inert. The kernel's answer for each is in
 * test/kernel/semantics.root.test.ts; the dumps are the real tools' (test/fixtures/conntrack).
 */
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/conntrack');
const LINKERD = corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt');

const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-side-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function explainText(text: string, name: string): Promise<{ exitCode: number; stdout: string }> {
  const file = path.join(scratch, name);
  writeFileSync(file, text);
  return runExplain(['--mesh', 'linkerd', '--iptables-save', file], {});
}

describe('side effects are never taken for "continue"', () => {
  it('raw --ctstate INVALID -j CT --notrack (every packet reads INVALID before conntrack): both directions bypass', async () => {
    const result = await runExplain(
      ['--mesh', 'linkerd', '--iptables-save', path.join(FIXTURES, 'linkerd-notrack-invalid/iptables-nft-save.v4.txt')],
      {},
    );
    expect(result.exitCode, result.stdout).toBe(95);
    expect(result.stdout).toMatch(
      /outbound TCP to any address but 127\.0\.0\.0\/8.* is not redirected.*--ctstate INVALID -j CT --notrack/,
    );
    expect(result.stdout).toMatch(
      /inbound TCP from any address to any port but 4190-4191.* is not redirected.*--ctstate INVALID -j CT --notrack/,
    );
  });

  it('raw --ctstate NEW -j CT --notrack never matches there: still a pass', async () => {
    const raw =
      '*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -m conntrack --ctstate NEW -j CT --notrack\nCOMMIT\n';
    const result = await explainText(`${readFileSync(LINKERD, 'utf8')}${raw}`, 'new.txt');
    expect(result.exitCode, result.stdout).toBe(0);
  });

  it('CT with an option not shown harmless (--timeout) is unknown', async () => {
    const raw =
      '*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -j CT --timeout tcp-short\nCOMMIT\n';
    const result = await explainText(`${readFileSync(LINKERD, 'utf8')}${raw}`, 'timeout.txt');
    expect(result.exitCode, result.stdout).toBe(95);
    expect(result.stdout).toMatch(/UNKNOWN/);
    expect(result.stdout).toMatch(/cannot evaluate "-j CT --timeout tcp-short"/);
  });

  it('a connection-mark test before conntrack (it never matches there) is unknown', async () => {
    const raw =
      '*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -m connmark ! --mark 0x1 -j CT --notrack\nCOMMIT\n';
    const result = await explainText(`${readFileSync(LINKERD, 'utf8')}${raw}`, 'connmark.txt');
    expect(result.exitCode, result.stdout).toBe(95);
    expect(result.stdout).toMatch(/has no conntrack entry yet \(before conntrack\)/);
  });
});
