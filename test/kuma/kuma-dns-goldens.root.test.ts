import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { makeNamespace, removeNamespace } from '../ambient/dumps.js';

/**
 * Kuma's goldens with DNS redirection on (kumahq/kuma test/transparentproxy/testdata,
 * `debian-12-with-multiple-flags`, 2.11.7 and 2.14.3, pinned in sources.json), loaded by the real
 * tools and explained with Interlock's flags for upstream's own (test/transparentproxy/config.go at
 * each tag: `--redirect-all-dns-traffic`, `--exclude-outbound-ports 1,22,333`,
 * `--exclude-inbound-ports 4444,55555`, `--exclude-outbound-ips 10.0.0.1,192.168.0.0/24`,
 * `--exclude-inbound-ips 192.168.0.1,172.32.16.8/16`, and what has no Interlock flag:
 * `--exclude-outbound-ports-for-uids 53,3000-5000:106-108`, `--vnet`).
 *
 * Between the two tags Kuma changed how it treats the application's TCP DNS (kumahq/kuma#15401,
 * January 2026, in 2.11.9, 2.12.9, 2.13.5 and 2.14.0): 2.11.7 sends it to the DNS proxy (15053),
 * 2.14.3 returns it to its original destination. Both are Kuma's rules; neither may fail. Nor may
 * Kuma's capture-all UDP DNS redirect, which sits in OUTPUT before the 127.0.0.6 return, and so
 * also takes DNS from the passthrough source to the DNS proxy (never a loop into the inbound port).
 * What does fail are the settings Interlock does not model, each named by its rule: asserted for
 * both families and every distribution's rendering in kuma-flag-goldens.root.test.ts. Here: the
 * DNS rules themselves, broken.
 */
const ROOT = path.resolve(import.meta.dirname, '../fixtures/meshes/kuma');
const namespace = makeNamespace('kuma-dns');
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-kuma-dns-'));
afterAll(() => {
  removeNamespace(namespace);
  rmSync(scratch, { recursive: true, force: true });
});

/** Upstream's flags as Interlock's (those Interlock has), the IPv4 addresses of each list. */
const FLAGS = [
  '--mesh=kuma',
  '--family=ipv4',
  '--dns-capture',
  '--exclude-outbound-ports=1,22,333',
  '--exclude-inbound-ports=4444,55555',
  '--exclude-outbound-cidrs=10.0.0.1/32,192.168.0.0/24',
  '--exclude-inbound-cidrs=192.168.0.1/32,172.32.0.0/16',
];

function loadAndDump(tag: string): string {
  const file = path.join(ROOT, tag, 'transparentproxy-flags/debian-12-with-multiple-flags.iptables-nft.golden');
  const text = readFileSync(file, 'utf8').replaceAll('ifPlaceholder', 'lo');
  const run = (tool: string, input?: string) =>
    execFileSync('ip', ['netns', 'exec', namespace, tool], { input, encoding: 'utf8' });
  run('iptables-nft-restore', '*nat\nCOMMIT\n*raw\nCOMMIT\n*mangle\nCOMMIT\n');
  run('iptables-nft-restore', text);
  return run('iptables-nft-save');
}

describe("explain --mesh kuma --dns-capture on Kuma's goldens with DNS redirection", () => {
  it("2.14.3 with the application's TCP DNS sent elsewhere, or its UDP DNS left alone: each fails naming its rule", async () => {
    const dump = loadAndDump('2.14.3');
    const tcpDns = /^(-A OUTPUT -p tcp .*--dport 53 -m owner ! --uid-owner 5678) -j RETURN$/m;
    const udpDns = /^-A OUTPUT -p udp .*--dport 53 -j REDIRECT --to-ports 15053\n/m;
    expect(dump).toMatch(tcpDns);
    expect(dump).toMatch(udpDns);
    const mutants: Array<[string, string, RegExp]> = [
      [
        'tcp-elsewhere',
        dump.replace(tcpDns, '$1 -j REDIRECT --to-ports 15002'),
        /redirected to local port 15002 .*expected redirected to local port 15053, or not redirected/,
      ],
      ['udp-alone', dump.replace(udpDns, ''), /outbound UDP .*port 53.*expected redirected to local port 15053 /],
    ];
    for (const [name, text, finding] of mutants) {
      const file = path.join(scratch, `2.14.3-${name}.v4`);
      writeFileSync(file, text);
      const result = await runExplain([...FLAGS, `--iptables-save=${file}`], {});
      expect(result.exitCode, name).toBe(98);
      expect(result.stdout, name).toMatch(finding);
    }
  });

  it("2.14.3 returns the application's TCP DNS and 2.11.7 redirects it: the goldens differ as kumahq/kuma#15401 says", () => {
    const newer = loadAndDump('2.14.3');
    const older = loadAndDump('2.11.7');
    const tcpDnsReturn = /-A OUTPUT -p tcp .*--dport 53 -m owner ! --uid-owner 5678 -j RETURN/;
    expect(newer).toMatch(tcpDnsReturn);
    expect(older).not.toMatch(tcpDnsReturn);
    expect(older).toMatch(/-A KUMA_MESH_OUTBOUND -p tcp .*--dport 53 -j REDIRECT --to-ports 15053/);
  });
});
