import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { makeNamespace, removeNamespace } from '../ambient/dumps.js';
import { blanketReturnFirst, dropProxyUidExclusion, type Mutant } from '../explain/mutants.js';

/**
 * Kuma's goldens with upstream's flag sets (kumahq/kuma test/transparentproxy/testdata,
 * `*-with-multiple-flags` at 2.9.19, 2.11.7 and 2.14.3, `*-with-multiple-config-flags` since
 * 2.11.7, pinned in sources.json): every distribution's rendering that differs from the others
 * (Debian 12's, Debian 10's, Ubuntu 20.04's iptables-nft and Amazon Linux 2's legacy; upstream's
 * other files are byte-equal to one of these, empty, or "executable not found"), IPv4 and IPv6
 * halves loaded together by the real restore tools of their backend and explained as one dual-stack
 * pod with Interlock's flags for upstream's settings (test/transparentproxy/config.go at each tag).
 *
 * Each fails exactly on the settings Interlock does not model, each named below with the rules
 * that carry it, per family; every other expectation holds. Each bypass mutant of either half then
 * fails with a finding the golden did not have, naming the mutated rule.
 */
const ROOT = path.resolve(import.meta.dirname, '../fixtures/meshes/kuma');
const namespace = makeNamespace('kuma-flags');
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-kuma-flags-'));
afterAll(() => {
  removeNamespace(namespace);
  rmSync(scratch, { recursive: true, force: true });
});

type FlagSet = 'with-multiple-flags' | 'with-multiple-config-flags';
type Family = 'ipv4' | 'ipv6';

/** Upstream's addresses, the same in both flag sets, as Interlock's CIDRs. */
const EXCLUDED_OUTBOUND = '--exclude-outbound-cidrs=10.0.0.1/32,192.168.0.0/24,fe80::1/128,fd00::/8';
const EXCLUDED_INBOUND =
  '--exclude-inbound-cidrs=192.168.0.1/32,172.32.0.0/16,fe80::/10,a81b:a033:6399:73c7:72b6:aa8c:6f22:7098/128';

/**
 * Interlock's flags for what each flag set configures. with-multiple-flags: `--redirect-all-dns-traffic`,
 * `--exclude-outbound-ports 1,22,333`, `--exclude-inbound-ports 4444,55555` and the IP lists.
 * with-multiple-config-flags: `/1.yaml`, `/2.yaml` and stdin merged, later winning (lists whole):
 * DNS on at 2.yaml's port 8888, outbound ports 6,77,888, inbound 4444,55555 (stdin's, not
 * 2.yaml's 10000,20000) and stdin's IP lists (not 2.yaml's 10.11.12.13, 172.14.15.16/32).
 */
const FLAGS: Record<FlagSet, readonly string[]> = {
  'with-multiple-flags': [
    '--dns-capture',
    '--exclude-outbound-ports=1,22,333',
    '--exclude-inbound-ports=4444,55555',
    EXCLUDED_OUTBOUND,
    EXCLUDED_INBOUND,
  ],
  'with-multiple-config-flags': [
    '--dns-capture',
    '--dns-port=8888',
    '--exclude-outbound-ports=6,77,888',
    '--exclude-inbound-ports=4444,55555',
    EXCLUDED_OUTBOUND,
    EXCLUDED_INBOUND,
  ],
};

/**
 * The settings Interlock does not model, each with the rules (comments dropped) that carry it, per
 * family. The excluded outbound addresses are modelled for TCP, but Kuma returns everything to them
 * first in OUTPUT, so their DNS and the proxy's loopback path to them go uncaptured too. A rule
 * that only touches what Interlock leaves to the mesh is named by none (UDP to ports 2-3: only DNS
 * is UDP that a configuration speaks of).
 */
type Unmodelled = ReadonlyArray<readonly [setting: string, rules: Record<Family, readonly string[]>]>;
const UNMODELLED: Record<FlagSet, Unmodelled> = {
  'with-multiple-flags': [
    [
      '--exclude-outbound-ports-for-uids 53,3000-5000:106-108',
      {
        ipv4: [
          '-A OUTPUT -p tcp -m multiport --dports 53,3000:5000 -m owner --uid-owner 106-108 -j RETURN',
          '-A OUTPUT -p udp -m multiport --dports 53,3000:5000 -m owner --uid-owner 106-108 -j RETURN',
        ],
        ipv6: [
          '-A OUTPUT -p tcp -m multiport --dports 53,3000:5000 -m owner --uid-owner 106-108 -j RETURN',
          '-A OUTPUT -p udp -m multiport --dports 53,3000:5000 -m owner --uid-owner 106-108 -j RETURN',
        ],
      },
    ],
    [
      '--vnet docker0:172.17.0.0/16 --vnet br+:172.18.0.0/16 --vnet iface:::1/64',
      {
        ipv4: [
          '-A PREROUTING ! -d 172.17.0.0/16 -i docker0 -p tcp -j REDIRECT --to-ports 15001',
          '-A PREROUTING ! -d 172.18.0.0/16 -i br+ -p tcp -j REDIRECT --to-ports 15001',
        ],
        ipv6: ['-A PREROUTING ! -d ::/64 -i iface -p tcp -j REDIRECT --to-ports 15001'],
      },
    ],
    [
      '--exclude-outbound-ips (their DNS and the proxy loopback path)',
      {
        ipv4: ['-A OUTPUT -d 10.0.0.1/32 -j RETURN', '-A OUTPUT -d 192.168.0.0/24 -j RETURN'],
        ipv6: ['-A OUTPUT -d fd00::/8 -j RETURN', '-A OUTPUT -d fe80::1/128 -j RETURN'],
      },
    ],
  ],
  'with-multiple-config-flags': [
    [
      'redirect.outbound.excludePortsForUIDs [1, 2-3:4-5]',
      {
        ipv4: [
          '-A OUTPUT -p tcp -m multiport --dports 1:65535 -m owner --uid-owner 1 -j RETURN',
          '-A OUTPUT -p tcp -m multiport --dports 2:3 -m owner --uid-owner 4-5 -j RETURN',
          '-A OUTPUT -p udp -m multiport --dports 1:65535 -m owner --uid-owner 1 -j RETURN',
        ],
        ipv6: [
          '-A OUTPUT -p tcp -m multiport --dports 1:65535 -m owner --uid-owner 1 -j RETURN',
          '-A OUTPUT -p tcp -m multiport --dports 2:3 -m owner --uid-owner 4-5 -j RETURN',
          '-A OUTPUT -p udp -m multiport --dports 1:65535 -m owner --uid-owner 1 -j RETURN',
        ],
      },
    ],
    [
      'redirect.vnet.networks [docker2:10.0.0.0/8, docker0:172.17.0.0/16, br+:172.18.0.0/16, iface:::1/64]',
      {
        ipv4: [
          '-A PREROUTING ! -d 10.0.0.0/8 -i docker2 -p tcp -j REDIRECT --to-ports 15001',
          '-A PREROUTING ! -d 172.17.0.0/16 -i docker0 -p tcp -j REDIRECT --to-ports 15001',
          '-A PREROUTING ! -d 172.18.0.0/16 -i br+ -p tcp -j REDIRECT --to-ports 15001',
        ],
        ipv6: ['-A PREROUTING ! -d ::/64 -i iface -p tcp -j REDIRECT --to-ports 15001'],
      },
    ],
    [
      'redirect.outbound.excludePortsForIPs (their DNS and the proxy loopback path)',
      {
        ipv4: ['-A OUTPUT -d 10.0.0.1/32 -j RETURN', '-A OUTPUT -d 192.168.0.0/24 -j RETURN'],
        ipv6: ['-A OUTPUT -d fd00::/8 -j RETURN', '-A OUTPUT -d fe80::1/128 -j RETURN'],
      },
    ],
  ],
};

interface FlagCase {
  readonly tag: string;
  readonly flagSet: FlagSet;
  readonly distribution: string;
  readonly backend: 'nft' | 'legacy';
  readonly halves: Record<Family, string>;
}

function flagCases(): FlagCase[] {
  const out: FlagCase[] = [];
  for (const tag of readdirSync(ROOT).sort()) {
    const dir = path.join(ROOT, tag, 'transparentproxy-flags');
    for (const file of readdirSync(dir).sort()) {
      const match = /^(.+)-(with-multiple-(?:config-)?flags)\.iptables-(nft|legacy)\.golden$/.exec(file);
      if (!match) continue;
      const [, distribution = '', flagSet, backend] = match;
      const text = (name: string) => readFileSync(path.join(dir, name), 'utf8').replaceAll('ifPlaceholder', 'lo');
      const halves = { ipv4: text(file), ipv6: text(file.replace('.iptables-', '.ip6tables-')) };
      out.push({ tag, flagSet: flagSet as FlagSet, distribution, backend: backend as 'nft' | 'legacy', halves });
    }
  }
  return out;
}

/** Both halves into the namespace by the backend's own restore tools, and dumped back by them. */
function loadAndDump(flagCase: FlagCase): Record<Family, string> {
  const run = (tool: string, input?: string) =>
    execFileSync('ip', ['netns', 'exec', namespace, tool], { input, encoding: 'utf8' });
  for (const family of ['iptables', 'ip6tables'])
    for (const backend of ['nft', 'legacy'])
      run(`${family}-${backend}-restore`, '*nat\nCOMMIT\n*raw\nCOMMIT\n*mangle\nCOMMIT\n');
  run(`iptables-${flagCase.backend}-restore`, flagCase.halves.ipv4);
  run(`ip6tables-${flagCase.backend}-restore`, flagCase.halves.ipv6);
  return {
    ipv4: run(`iptables-${flagCase.backend}-save`),
    ipv6: run(`ip6tables-${flagCase.backend}-save`),
  };
}

interface Explained {
  readonly exitCode: number;
  /** Each finding as `family rule-at-fault` (comments dropped), sorted, without repeats. */
  readonly rules: string[];
  /** Each finding's message whole. */
  readonly messages: string[];
}

async function explain(flagCase: FlagCase, dump: Record<Family, string>, name: string): Promise<Explained> {
  const stem = path.join(scratch, `${flagCase.tag}-${flagCase.distribution}-${flagCase.flagSet}-${name}`);
  writeFileSync(`${stem}.v4`, dump.ipv4);
  writeFileSync(`${stem}.v6`, dump.ipv6);
  const legacy = flagCase.backend === 'legacy' ? '-legacy' : '';
  const result = await runExplain(
    [
      '--mesh=kuma',
      '--family=dual',
      ...FLAGS[flagCase.flagSet],
      `--iptables${legacy}-save=${stem}.v4`,
      `--ip6tables${legacy}-save=${stem}.v6`,
      '--output=json',
    ],
    {},
  );
  const report = JSON.parse(result.stdout) as { findings: Array<{ expectation: string; message: string }> };
  const rules = report.findings.map((finding) => {
    const rule = /`(-A [^`]+)`/.exec(finding.message)?.[1] ?? finding.message;
    return `${finding.expectation.split('/')[0]} ${rule.replace(/ -m comment --comment "[^"]*"/, '')}`;
  });
  return {
    exitCode: result.exitCode,
    rules: [...new Set(rules)].sort(),
    messages: report.findings.map((finding) => finding.message),
  };
}

function unmodelledRules(flagSet: FlagSet): string[] {
  return UNMODELLED[flagSet]
    .flatMap(([, rules]) => (['ipv4', 'ipv6'] as const).flatMap((family) => rules[family].map((r) => `${family} ${r}`)))
    .sort();
}

/** The rule of `chain` that redirects to `port`, sent to `to` instead. */
function changeChainRedirect(text: string, chain: string, port: number, to: number): Mutant | undefined {
  const lines = text.split('\n');
  const index = lines.findIndex((line) => line.startsWith(`-A ${chain} `) && line.endsWith(`--to-ports ${port}`));
  if (index < 0) return undefined;
  const mutated = (lines[index] as string).replace(`--to-ports ${port}`, `--to-ports ${to}`);
  lines[index] = mutated;
  return { text: lines.join('\n'), mustName: mutated };
}

function mutantsOf(text: string): Array<[string, Mutant | undefined]> {
  return [
    ['outbound port', changeChainRedirect(text, 'KUMA_MESH_OUTBOUND_REDIRECT', 15001, 15002)],
    ['inbound port', changeChainRedirect(text, 'KUMA_MESH_INBOUND_REDIRECT', 15006, 15007)],
    ['uid exclusion', dropProxyUidExclusion(text, '5678')],
    ['blanket return', blanketReturnFirst(text, 'KUMA_MESH_OUTBOUND')],
  ];
}

const cases = flagCases();

describe("explain --mesh kuma on Kuma's flag-set goldens, both families loaded by the real tools", () => {
  it('covers each flag set at each pinned tag, each distinct rendering, both backends', () => {
    const seen = (tag: string, flagSet: FlagSet) =>
      cases
        .filter((flagCase) => flagCase.tag === tag && flagCase.flagSet === flagSet)
        .map((flagCase) => `${flagCase.distribution} ${flagCase.backend}`);
    const older = ['amazon-linux-2 legacy', 'debian-10 nft', 'debian-12 nft', 'ubuntu-20-04 nft'];
    const newer = ['amazon-linux-2 legacy', 'debian-12 nft', 'ubuntu-20-04 nft'];
    expect(seen('2.9.19', 'with-multiple-flags')).toEqual(older);
    expect(seen('2.9.19', 'with-multiple-config-flags')).toEqual([]);
    expect(seen('2.11.7', 'with-multiple-flags')).toEqual(older);
    expect(seen('2.11.7', 'with-multiple-config-flags')).toEqual(older);
    expect(seen('2.14.3', 'with-multiple-flags')).toEqual(newer);
    expect(seen('2.14.3', 'with-multiple-config-flags')).toEqual(newer);
    for (const flagCase of cases) expect(flagCase.halves.ipv6, flagCase.distribution).toContain('::6/128');
  });

  for (const flagCase of cases) {
    const title = `${flagCase.tag} ${flagCase.distribution}-${flagCase.flagSet} (${flagCase.backend})`;
    it(`${title}: fails only on the settings Interlock does not model; each mutant adds a finding naming its rule`, async () => {
      const dump = loadAndDump(flagCase);
      expect(dump.ipv4).toContain('KUMA_MESH_OUTBOUND');
      expect(dump.ipv6).toContain('KUMA_MESH_OUTBOUND');
      const golden = await explain(flagCase, dump, 'golden');
      expect(golden.exitCode).toBe(98);
      expect(golden.rules).toEqual(unmodelledRules(flagCase.flagSet));
      for (const family of ['ipv4', 'ipv6'] as const)
        for (const [name, mutant] of mutantsOf(dump[family])) {
          const label = `${family} ${name}`;
          expect(mutant, label).toBeDefined();
          if (!mutant) continue;
          const failed = await explain(flagCase, { ...dump, [family]: mutant.text }, label.replaceAll(' ', '-'));
          expect(failed.exitCode, label).toBe(98);
          const added = failed.messages.filter((message) => !golden.messages.includes(message));
          expect(added.length, label).toBeGreaterThan(0);
          expect(added.join('\n'), label).toContain(mutant.mustName);
        }
    });
  }
});
