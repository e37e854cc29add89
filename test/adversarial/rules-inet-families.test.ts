import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { flagsFor, loadManifest } from '../explain/corpus.js';

/**
 * An nft `inet` table hooks IPv4 and IPv6 alike, whatever addresses its rules name: `explain
 * --family auto` must check both families for it. The dump is Istio's native nftables case with
 * `meta nfproto ipv6 return` inserted first in its output chain, read back with `nft -j`.
 */
const FIXTURE = path.resolve(
  import.meta.dirname,
  '../fixtures/conntrack/istio-nftables-ipv6-return/nft-list-ruleset.json',
);
const istio = flagsFor(loadManifest().find((c) => c.dir === 'istio-nftables/inbound-ports-wildcard') as never);

describe('an inet table is checked for both families', () => {
  it('IPv6 outbound returned early in an inet table with no IPv6 address: a mismatch under --family auto', async () => {
    const result = await runExplain([...istio.argv, '--nft-ruleset', FIXTURE, '--format=json'], {});
    expect(result.stderr).toBe('');
    const report = JSON.parse(result.stdout) as { families: string[]; status: string };
    expect(report.families).toEqual(['ipv4', 'ipv6']);
    expect(report.status).toBe('failed');
    expect(result.exitCode).toBe(126);
  });

  it('the text names the IPv6 region and the rule', async () => {
    const result = await runExplain([...istio.argv, '--nft-ruleset', FIXTURE], {});
    expect(result.stdout).toMatch(/outbound TCP to any address.*is not redirected.*meta nfproto ipv6.*return/);
  });
});
