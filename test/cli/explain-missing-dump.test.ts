import { describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';

const DIR = new URL('../fixtures/corpus/linkerd/cni-default/', import.meta.url).pathname;
const V4 = `${DIR}iptables-nft-save.v4.txt`;
const V6 = `${DIR}iptables-nft-save.v6.txt`;

describe('explain names a dump that is missing for a family it was asked about', () => {
  it('--family dual with only an IPv4 dump: the IPv6 dump is missing, not every IPv6 region unredirected', async () => {
    const run = await runExplain(['--mesh', 'linkerd', '--iptables-save', V4, '--family', 'dual'], {});
    expect(run.exitCode).toBe(64);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'interlock explain: ConfigInvalid: --family dual asks about IPv6, but no IPv6 dump was given: add --ip6tables-save FILE (or --ip6tables-legacy-save, --nft-ruleset)\n' +
        "Run 'interlock explain --help' for its usage.\n",
    );
    expect(run.stderr).not.toContain('not redirected');
  });

  it('--family ipv4 with only an IPv6 dump names the IPv4 dump', async () => {
    const run = await runExplain(['--mesh', 'linkerd', '--ip6tables-save', V6, '--family', 'ipv4'], {});
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain('--family ipv4 asks about IPv4, but no IPv4 dump was given: add --iptables-save FILE');
  });

  it('with both dumps, or an nft ruleset (the whole ruleset, every family), the analysis runs', async () => {
    const both = await runExplain(
      ['--mesh', 'linkerd', '--iptables-save', V4, '--ip6tables-save', V6, '--family', 'dual'],
      {},
    );
    expect(both.stderr).toBe('');
    expect(both.stdout).toContain('families checked: IPv4, IPv6\n');
    const nft = await runExplain(
      ['--mesh', 'linkerd', '--nft-ruleset', `${DIR}nft-list-ruleset.json`, '--family', 'dual'],
      {},
    );
    expect(nft.stderr).toBe('');
    expect(nft.stdout).toContain('families checked: IPv4, IPv6\n');
  });
});
