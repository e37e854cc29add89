import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { flagsFor, loadManifest } from '../explain/corpus.js';

/**
 * An untracked packet never reaches the NAT core, so no REDIRECT applies to it: a NOTRACK in the
 * raw table (or an nft chain hooked before conntrack, priority below -200) in front of correct mesh
 * rules sends that traffic past the proxy. The dumps are the real tools' output
 * (test/fixtures/conntrack, scripts/capture-conntrack-fixtures.sh); the kernel's behaviour for each
 * is shown in test/kernel/semantics.root.test.ts.
 */
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/conntrack');
const file = (name: string): string => path.join(FIXTURES, name);
const LINKERD = ['--mesh', 'linkerd'];
const linkerdV6 = flagsFor(loadManifest().find((c) => c.dir === 'linkerd/ipv6-gid-subnets') as never);
const istio = flagsFor(loadManifest().find((c) => c.dir === 'istio-nftables/inbound-ports-wildcard') as never);

async function explain(argv: readonly string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  return runExplain([...argv], {});
}

describe('NOTRACK before correct mesh rules is a mismatch naming the region and the rule', () => {
  for (const backend of ['nft', 'legacy'] as const) {
    const flag = backend === 'nft' ? '--iptables-save' : '--iptables-legacy-save';
    it(`raw OUTPUT -j CT --notrack for 10.96.0.0/12 (iptables-${backend})`, async () => {
      const result = await explain([...LINKERD, flag, file(`linkerd-notrack-output/iptables-${backend}-save.v4.txt`)]);
      expect(result.stderr).toBe('');
      expect(result.exitCode, result.stdout).toBe(95);
      expect(result.stdout).toMatch(
        /outbound TCP to 10\.96\.0\.0\/12, any port, from any uid but 2102.* is not redirected/,
      );
      expect(result.stdout).toMatch(/raw OUTPUT.*-j CT --notrack/);
    });

    it(`raw PREROUTING -j NOTRACK for TCP (iptables-${backend})`, async () => {
      const result = await explain([
        ...LINKERD,
        flag,
        file(`linkerd-notrack-prerouting/iptables-${backend}-save.v4.txt`),
      ]);
      expect(result.exitCode, result.stdout).toBe(95);
      expect(result.stdout).toMatch(/inbound TCP from any address to any port but 4190-4191.* is not redirected/);
      expect(result.stdout).toMatch(/raw PREROUTING.*-j NOTRACK/);
    });
  }

  it('IPv6: raw OUTPUT -j CT --notrack for fd00:10:96::/108', async () => {
    const result = await explain([
      ...linkerdV6.argv,
      '--family',
      'ipv6',
      '--ip6tables-save',
      file('linkerd-notrack-output-v6/iptables-nft-save.v6.txt'),
    ]);
    expect(result.exitCode, result.stdout).toBe(95);
    expect(result.stdout).toMatch(/outbound TCP to fd00:10:96::\/108, any port but 443, 6443/);
    expect(result.stdout).toMatch(/-j CT --notrack/);
  });

  it('nft notrack in chains at priority raw (inet table beside Istio native nftables)', async () => {
    const result = await explain([
      ...istio.argv,
      '--family=ipv4',
      '--nft-ruleset',
      file('istio-nftables-notrack-raw/nft-list-ruleset.json'),
    ]);
    expect(result.stderr).toBe('');
    expect(result.exitCode, result.stdout).toBe(126);
    expect(result.stdout).toMatch(/outbound TCP to 10\.96\.0\.0\/12.* is not redirected.*attack output.*notrack/);
    expect(result.stdout).toMatch(
      /inbound TCP from any address to port 8080.* is not redirected.*attack prerouting.*notrack/,
    );
  });

  it('nft notrack after conntrack (priority mangle) changes nothing: still a pass', async () => {
    const result = await explain([
      ...istio.argv,
      '--family=ipv4',
      '--nft-ruleset',
      file('istio-nftables-notrack-mangle/nft-list-ruleset.json'),
    ]);
    expect(result.exitCode, result.stdout).toBe(0);
  });

  it('CT --zone, --helper and --ctevents leave NAT alone: still a pass', async () => {
    const result = await explain([...LINKERD, '--iptables-save', file('linkerd-ct-harmless/iptables-nft-save.v4.txt')]);
    expect(result.exitCode, result.stdout).toBe(0);
  });

  it('a CT option whose effect on NAT is not proven (--zone-orig) is unknown, never a pass', async () => {
    const result = await explain([
      ...LINKERD,
      '--iptables-save',
      file('linkerd-ct-zone-orig/iptables-nft-save.v4.txt'),
    ]);
    expect(result.exitCode, result.stdout).toBe(95);
    expect(result.stdout).toMatch(/UNKNOWN|unknown/);
    expect(result.stdout).toMatch(/CT --zone-orig 7/);
  });
});

describe('the kernel hook order: nat chains run inside the NAT core (priority -100)', () => {
  const generic = ['--mesh', 'generic', '--inbound-port', '15006', '--outbound-port', '15001', '--proxy-uid', '1337'];

  it('a nat chain at -160 runs after a route chain at -150 that marks 10.96.0.0/12: a mismatch', async () => {
    const result = await explain([...generic, '--nft-ruleset', file('nat-after-mangle/nft-list-ruleset.json')]);
    expect(result.stderr).toBe('');
    expect(result.exitCode, result.stdout).toBe(97);
    expect(result.stdout).toMatch(/outbound TCP to 10\.96\.0\.0\/12.* is not redirected/);
  });

  it('a nat chain at 50 runs before a route chain at 0: the mark comes too late, a pass', async () => {
    const result = await explain([...generic, '--nft-ruleset', file('nat-before-filter/nft-list-ruleset.json')]);
    expect(result.exitCode, result.stdout).toBe(0);
  });
});
