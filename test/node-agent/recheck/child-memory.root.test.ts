import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { readPodRules } from '../../../src/node-agent/recheck/netns-rules.js';
import { makeNamespace, removeNamespace } from '../../ambient/dumps.js';

// A tenant with NET_ADMIN writes a ruleset whose JSON listing makes `nft -j` grow far past its
// output (46 MB of RSS for 1.8 MB of JSON at 5,000 rules here): the agent's reading child must meet
// its own memory limit and end as a typed, unreadable outcome, never take the agent's cgroup down.
// The rules are made by the real iptables-nft-restore from a generated table (scattered RETURNs).
const namespace = makeNamespace('childmem');
afterAll(() => removeNamespace(namespace));

function hostileTable(rules: number): string {
  const lines = ['*nat', ':OUTPUT ACCEPT [0:0]'];
  for (let i = 1; i <= rules; i++)
    lines.push(`-A OUTPUT -d 10.${Math.floor(i / 250)}.${i % 250}.1/32 -p tcp --dport ${1000 + (i % 60000)} -j RETURN`);
  return [...lines, 'COMMIT', ''].join('\n');
}

describe('the re-check’s reading children run under their own memory limit', () => {
  it('a ruleset too big to list within it is unreadable, named, and the small saver still reads', async () => {
    execFileSync('ip', ['netns', 'exec', namespace, 'iptables-nft-restore'], { input: hostileTable(12_000) });
    const outcomes = await readPodRules(`/run/netns/${namespace}`, ['ipv4'], 20_000);
    // readPodRules answers each family's saver first and the nft listing last.
    const nft = outcomes.at(-1)!;
    expect(nft.kind).toBe('unreadable');
    expect(nft.kind === 'unreadable' && nft.command).toContain('nft -j list ruleset');
    expect(nft.kind === 'unreadable' && nft.why).toMatch(/signal|exit|more than/);
    expect(outcomes[0]!.kind).toBe('read');
  });
});
