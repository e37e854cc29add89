import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Family } from '../../src/addr/ip.js';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import type { InterceptionSpec } from '../../src/config/interception.js';
import type { Expectation } from '../../src/expect/expectation.js';
import { outboundExpectations } from '../../src/expect/outbound-expectations.js';
import { inboundExpectations } from '../../src/expect/inbound-expectations.js';
import { regionJson } from '../../src/expect/region-text.js';
import { connectionSpace } from '../../src/trace/connection-space.js';
import { buildInterfaceAtoms } from '../../src/trace/interface-atoms.js';
import { ZERO_MARK } from '../../src/trace/mark-set.js';
import { intersect, type Region } from '../../src/trace/region.js';
import { CORPUS } from '../explain/corpus.js';
import { specFromFlags } from '../harness/spec.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-expect-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/** As a ruleset with `eth+` and the kernel's `lo` cuts the interface names. */
const wildcardAtoms = buildInterfaceAtoms(['eth+', 'lo']);
const space = (ctstates: number): Region => ({ ...connectionSpace('ipv4', wildcardAtoms.all), ctstates });

async function explainFile(text: string, argv: readonly string[]) {
  const file = path.join(scratch, `${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(file, text);
  return runExplain([...argv, `--iptables-save=${file}`], {});
}

describe('expectations are disjoint regions that cover the space', () => {
  it('outbound: every packet of the space belongs to exactly one expectation', () => {
    const spec = specFromFlags(['--mesh=istio', '--exclude-outbound-cidrs=10.0.0.0/8', '--exclude-interfaces=eth9']);
    const list = outboundExpectations(spec, 'ipv4', wildcardAtoms, space(1));
    const regions = list.flatMap((e) => e.regions);
    for (let i = 0; i < regions.length; i++)
      for (let j = i + 1; j < regions.length; j++)
        expect(intersect(regions[i] as Region, regions[j] as Region)).toBeUndefined();
    expect(list.map((e) => e.id)).toContain('ipv4/outbound/excluded-cidr');
  });

  it('drop-invalid: the INVALID state is expected dropped, everywhere', () => {
    const spec = specFromFlags(['--mesh=istio', '--drop-invalid']);
    const invalid = inboundExpectations(spec, 'ipv4', wildcardAtoms, space(1 | 8)).find(
      (e) => e.id === 'ipv4/inbound/invalid-dropped',
    );
    expect(invalid?.expected).toEqual({ kind: 'dropped' });
    expect(invalid?.regions.map((r) => r.ctstates)).toEqual([8]);
  });
});

describe('configuration regions against real dumps', () => {
  const istioDrop = readFileSync(path.join(CORPUS, 'istio/drop-invalid/iptables-nft-save.v4.txt'), 'utf8');
  const linkerd = readFileSync(path.join(CORPUS, 'linkerd/cni-default/iptables-nft-save.v4.txt'), 'utf8');

  it('drop-invalid configured but the DROP missing fails, naming conntrack INVALID', async () => {
    const argv = ['--mesh=istio', '--drop-invalid', '--include-outbound-cidrs=', '--include-inbound-ports='];
    expect((await explainFile(istioDrop, argv)).exitCode).toBe(0);
    const result = await explainFile(istioDrop.replace('-A ISTIO_DROP -j DROP\n', ''), argv);
    expect(result.exitCode).toBe(126);
    expect(result.stdout).toContain('conntrack INVALID');
    expect(result.stdout).toContain('expected dropped');
  });

  it("Kuma 2.14.3's TCP DNS return holds (DNS rules first); a TCP DNS redirect to another port fails, naming it", async () => {
    const golden = readFileSync(
      path.join(
        CORPUS,
        '../meshes/kuma/2.14.3/transparentproxy-flags/debian-12-with-multiple-flags.iptables-nft.golden',
      ),
      'utf8',
    ).replaceAll('ifPlaceholder', 'lo');
    const argv = ['--mesh=kuma', '--family=ipv4', '--dns-capture', '--output=json'];
    const tcpDns = /^(-A OUTPUT -p tcp .*--dport 53 -m owner ! --uid-owner 5678) -j RETURN$/m;
    const expectationsAt = async (text: string, rule: RegExp) => {
      const report = JSON.parse((await explainFile(text, argv)).stdout) as {
        findings: Array<{ expectation: string; message: string }>;
      };
      return report.findings.filter((finding) => rule.test(finding.message)).map((finding) => finding.expectation);
    };
    expect(golden).toMatch(tcpDns);
    expect(await expectationsAt(golden, /--dport 53 -m owner ! --uid-owner 5678 -j RETURN`/)).toEqual([]);
    const elsewhere = golden.replace(tcpDns, '$1 -j REDIRECT --to-ports 15002');
    expect(await expectationsAt(elsewhere, /expected redirected to local port 15053, or not redirected/)).toEqual([
      'ipv4/dns/app-tcp',
    ]);
  });

  it("Kuma 2.11.7's TCP DNS redirect to the DNS port holds (DNS rules first); a DNAT to another host's DNS port fails", async () => {
    const golden = readFileSync(
      path.join(
        CORPUS,
        '../meshes/kuma/2.11.7/transparentproxy-flags/debian-12-with-multiple-flags.iptables-nft.golden',
      ),
      'utf8',
    ).replaceAll('ifPlaceholder', 'lo');
    const argv = ['--mesh=kuma', '--family=ipv4', '--dns-capture', '--output=json'];
    const failing = async (text: string) =>
      (
        JSON.parse((await explainFile(text, argv)).stdout) as {
          findings: Array<{ expectation: string; message: string }>;
        }
      ).findings.filter((finding) => finding.expectation === 'ipv4/dns/app-tcp');
    const tcpDns = /^(-A KUMA_MESH_OUTBOUND -p tcp .*--dport 53) -j REDIRECT --to-ports 15053$/m;
    expect(golden).toMatch(tcpDns);
    expect(await failing(golden)).toEqual([]);
    // The same port on another host is not the DNS proxy: the answer must be a REDIRECT to it.
    const elsewhere = await failing(golden.replace(tcpDns, '$1 -j DNAT --to-destination 192.0.2.53:15053'));
    expect(elsewhere.length).toBeGreaterThan(0);
    expect(elsewhere[0]?.message).toContain('--to-destination 192.0.2.53:15053');
    expect(elsewhere[0]?.message).toContain(
      "because the application's TCP DNS goes to the DNS port or, as the mesh allows, to its original destination",
    );
  });

  it('an excluded outbound port sent to a REDIRECT without a port (to the local host) fails, naming the rule', async () => {
    const argv = ['--mesh=linkerd', '--exclude-outbound-ports=25', '--output=json'];
    const portless = '-A PROXY_INIT_OUTPUT -p tcp -m tcp --dport 25 -j REDIRECT';
    const excluded = linkerd.replace(
      '-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102',
      `-A PROXY_INIT_OUTPUT -p tcp -m tcp --dport 25 -j RETURN\n-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102`,
    );
    expect((await explainFile(excluded, argv)).exitCode).toBe(0);
    const result = await explainFile(excluded.replace('--dport 25 -j RETURN', '--dport 25 -j REDIRECT'), argv);
    expect(result.exitCode).toBe(95);
    const findings = (JSON.parse(result.stdout) as { findings: Array<{ expectation: string; message: string }> })
      .findings;
    expect(findings.map((finding) => finding.expectation)).toContain('ipv4/outbound/excluded-port');
    expect(findings.find((finding) => finding.expectation === 'ipv4/outbound/excluded-port')?.message).toContain(
      portless,
    );
  });

  it('an excluded outbound range the rules do not exclude fails, naming the range', async () => {
    const result = await explainFile(linkerd, ['--mesh=linkerd', '--exclude-outbound-cidrs=10.0.0.0/8']);
    expect(result.exitCode).toBe(95);
    expect(result.stdout).toContain('outbound TCP to 10.0.0.0/8');
    expect(result.stdout).toContain('expected not redirected because excluded outbound ranges are not captured');
  });

  it('an excluded inbound source the rules do not exclude fails, naming the range', async () => {
    const result = await explainFile(linkerd, ['--mesh=linkerd', '--exclude-inbound-cidrs=192.168.0.0/16']);
    expect(result.exitCode).toBe(95);
    expect(result.stdout).toContain('inbound TCP from 192.168.0.0/16');
  });

  it('an excluded interface wildcard is a region: `eth+` excluded but redirected fails, naming it', async () => {
    const result = await explainFile(linkerd, ['--mesh=linkerd', '--exclude-interfaces=eth+']);
    expect(result.exitCode).toBe(95);
    expect(result.stdout).toContain('via eth+ (other)');
  });
});

// Every claim the configuration makes, in order, with the answer it asks for and the reason a
// finding quotes (the golden files hold the regions of the corpus cases, not these sentences).

/** As a ruleset naming eth9 and a KubeVirt interface kv0 cuts the interface names. */
const atoms = buildInterfaceAtoms(['eth9', 'kv0']);

/** The spaces verify.ts traces: TCP and captured DNS out, any socket mark; TCP in, new and invalid, no mark. */
function outSpace(family: Family): Region {
  return { ...connectionSpace(family, atoms.all), protocols: 3 };
}
const inSpace = (family: Family): Region => ({ ...outSpace(family), protocols: 1, mark: ZERO_MARK, ctstates: 1 | 8 });

function all(spec: InterceptionSpec, family: Family): Expectation[] {
  return [
    ...outboundExpectations(spec, family, atoms, outSpace(family)),
    ...inboundExpectations(spec, family, atoms, inSpace(family)),
  ];
}
const claims = (list: readonly Expectation[]) =>
  list.map((expectation) => [expectation.id, expectation.expected, expectation.because]);
const find = (list: readonly Expectation[], id: string) =>
  list.find((expectation) => expectation.id === id) as Expectation;

/** Istio with every option that adds a claim. */
const rich = specFromFlags([
  '--mesh=istio',
  '--drop-invalid',
  '--exclude-interfaces=eth9',
  '--reroute-interfaces=kv0',
  '--dns-capture',
  '--dns-servers=10.96.0.10,fd00::a',
  '--include-outbound-gids=5,6',
  '--include-outbound-cidrs=10.0.0.0/8,127.0.0.0/16',
  '--exclude-outbound-gids=7',
  '--include-outbound-ports=9000',
  '--exclude-outbound-cidrs=10.1.0.0/16',
  '--exclude-inbound-cidrs=192.168.0.0/16',
  '--include-inbound-ports=80,8080,15008',
]);

const RICH_IPV4 = [
  ['ipv4/outbound/excluded-interface', { kind: 'not-redirected' }, 'interfaces eth9 are excluded'],
  ['ipv4/outbound/impossible', undefined, 'loopback destinations are only reached over lo (no such packet exists)'],
  [
    'ipv4/outbound/passthrough-source',
    { kind: 'not-looped', inboundPort: 15006 },
    "loopback traffic from the proxy's inbound passthrough source must not loop back into it",
  ],
  ['ipv4/dns/app', { kind: 'redirect', port: 15053 }, 'DNS from the application is captured'],
  [
    'ipv4/outbound/proxy-loopback-to-pod',
    { kind: 'redirect', port: 15006 },
    'the proxy (uid 1337) calling its own pod over loopback reaches the inbound port',
  ],
  [
    'ipv4/outbound/proxy-loopback-other',
    { kind: 'not-looped', inboundPort: 15006 },
    "the proxy's other loopback traffic (other uids and groups, tunnel and DNS ports, other loopback addresses) must not loop back into it",
  ],
  [
    'ipv4/outbound/proxy-group-loopback',
    { kind: 'not-looped', inboundPort: 15006 },
    "the proxy's other loopback traffic (other uids and groups, tunnel and DNS ports, other loopback addresses) must not loop back into it",
  ],
  [
    'ipv4/outbound/proxy-uid-1337',
    { kind: 'not-redirected' },
    "the proxy's own traffic (uid 1337) must not loop back into it",
  ],
  [
    'ipv4/outbound/proxy-gid-1337',
    { kind: 'not-redirected' },
    "the proxy's own traffic (gid 1337) must not loop back into it",
  ],
  ['ipv4/outbound/other-udp', undefined, 'the configuration speaks of UDP only for DNS'],
  [
    'ipv4/outbound/loopback-dns-port',
    undefined,
    'TCP to port 53 over loopback goes through the DNS rules, which the configuration leaves to the mesh',
  ],
  ['ipv4/outbound/loopback', { kind: 'not-redirected' }, 'traffic over loopback stays local'],
  ['ipv4/outbound/host-loopback', { kind: 'not-redirected' }, 'host-loopback destinations are never redirected'],
  ['ipv4/outbound/excluded-port', { kind: 'not-redirected' }, 'excluded outbound ports are not captured'],
  ['ipv4/outbound/not-included-gid', { kind: 'not-redirected' }, 'only the included groups are captured'],
  ['ipv4/outbound/included-port', { kind: 'redirect', port: 15001 }, 'included outbound ports are always captured'],
  ['ipv4/outbound/excluded-cidr', { kind: 'not-redirected' }, 'excluded outbound ranges are not captured'],
  ['ipv4/outbound/app', { kind: 'redirect', port: 15001 }, 'outbound TCP from the application is captured'],
  ['ipv4/outbound/not-included-address', { kind: 'not-redirected' }, 'only the included ranges are captured'],
  ['ipv4/inbound/invalid-dropped', { kind: 'dropped' }, 'packets in conntrack state INVALID are dropped'],
  ['ipv4/inbound/excluded-interface', { kind: 'not-redirected' }, 'interfaces eth9 are excluded'],
  [
    'ipv4/inbound/loopback',
    undefined,
    "connections arriving over lo were decided in OUTPUT (the kernel's NAT binds once)",
  ],
  ['ipv4/inbound/loopback-destination', undefined, 'loopback destinations never arrive from the network'],
  [
    'ipv4/inbound/rerouted-interface',
    { kind: 'redirect', port: 15001 },
    'TCP arriving on virtual interfaces kv0 for an included range goes to the outbound port',
  ],
  [
    'ipv4/inbound/rerouted-interface-other',
    { kind: 'not-redirected' },
    'TCP arriving on a virtual interface outside the included ranges is left alone',
  ],
  ['ipv4/inbound/excluded-source', { kind: 'not-redirected' }, 'inbound from excluded source ranges is not captured'],
  ['ipv4/inbound/tunnel-port', { kind: 'not-redirected' }, 'the inbound tunnel port 15008 is not captured'],
  ['ipv4/inbound/excluded-port', { kind: 'not-redirected' }, 'excluded inbound ports are not captured'],
  ['ipv4/inbound/not-included-port', { kind: 'not-redirected' }, 'only the included inbound ports are captured'],
  ['ipv4/inbound/app', { kind: 'redirect', port: 15006 }, 'inbound TCP to an application port is captured'],
];
const RICH_IPV6 = [
  ['ipv6/outbound/excluded-interface', { kind: 'not-redirected' }, 'interfaces eth9 are excluded'],
  ['ipv6/outbound/impossible', undefined, 'loopback destinations are only reached over lo (no such packet exists)'],
  [
    'ipv6/outbound/passthrough-source',
    { kind: 'not-looped', inboundPort: 15006 },
    "loopback traffic from the proxy's inbound passthrough source must not loop back into it",
  ],
  ['ipv6/dns/app', { kind: 'redirect', port: 15053 }, 'DNS from the application is captured'],
  [
    'ipv6/outbound/proxy-loopback-to-pod',
    { kind: 'redirect', port: 15006 },
    'the proxy (uid 1337) calling its own pod over loopback reaches the inbound port',
  ],
  [
    'ipv6/outbound/proxy-loopback-other',
    { kind: 'not-looped', inboundPort: 15006 },
    "the proxy's other loopback traffic (other uids and groups, tunnel and DNS ports, other loopback addresses) must not loop back into it",
  ],
  [
    'ipv6/outbound/proxy-group-loopback',
    { kind: 'not-looped', inboundPort: 15006 },
    "the proxy's other loopback traffic (other uids and groups, tunnel and DNS ports, other loopback addresses) must not loop back into it",
  ],
  [
    'ipv6/outbound/proxy-uid-1337',
    { kind: 'not-redirected' },
    "the proxy's own traffic (uid 1337) must not loop back into it",
  ],
  [
    'ipv6/outbound/proxy-gid-1337',
    { kind: 'not-redirected' },
    "the proxy's own traffic (gid 1337) must not loop back into it",
  ],
  ['ipv6/outbound/other-udp', undefined, 'the configuration speaks of UDP only for DNS'],
  [
    'ipv6/outbound/loopback-dns-port',
    undefined,
    'TCP to port 53 over loopback goes through the DNS rules, which the configuration leaves to the mesh',
  ],
  ['ipv6/outbound/loopback', { kind: 'not-redirected' }, 'traffic over loopback stays local'],
  ['ipv6/outbound/excluded-port', { kind: 'not-redirected' }, 'excluded outbound ports are not captured'],
  ['ipv6/outbound/not-included-gid', { kind: 'not-redirected' }, 'only the included groups are captured'],
  ['ipv6/outbound/included-port', { kind: 'redirect', port: 15001 }, 'included outbound ports are always captured'],
  ['ipv6/outbound/not-included-address', { kind: 'not-redirected' }, 'only the included ranges are captured'],
  ['ipv6/inbound/invalid-dropped', { kind: 'dropped' }, 'packets in conntrack state INVALID are dropped'],
  ['ipv6/inbound/excluded-interface', { kind: 'not-redirected' }, 'interfaces eth9 are excluded'],
  [
    'ipv6/inbound/loopback',
    undefined,
    "connections arriving over lo were decided in OUTPUT (the kernel's NAT binds once)",
  ],
  ['ipv6/inbound/loopback-destination', undefined, 'loopback destinations never arrive from the network'],
  [
    'ipv6/inbound/rerouted-interface-other',
    { kind: 'not-redirected' },
    'TCP arriving on a virtual interface outside the included ranges is left alone',
  ],
  ['ipv6/inbound/tunnel-port', { kind: 'not-redirected' }, 'the inbound tunnel port 15008 is not captured'],
  ['ipv6/inbound/excluded-port', { kind: 'not-redirected' }, 'excluded inbound ports are not captured'],
  ['ipv6/inbound/not-included-port', { kind: 'not-redirected' }, 'only the included inbound ports are captured'],
  ['ipv6/inbound/app', { kind: 'redirect', port: 15006 }, 'inbound TCP to an application port is captured'],
];

describe('every claim of a configuration that uses every option', () => {
  it('IPv4: ids, answers and reasons in claim order', () => {
    expect(claims(all(rich, 'ipv4'))).toEqual(RICH_IPV4);
  });

  it('IPv6: the IPv4-only ranges claim nothing, so their expectations are left out', () => {
    expect(claims(all(rich, 'ipv6'))).toEqual(RICH_IPV6);
  });

  it('each expectation carries its family and hook', () => {
    for (const family of ['ipv4', 'ipv6'] as const) {
      expect(outboundExpectations(rich, family, atoms, outSpace(family)).map((e) => [e.family, e.hook])).toEqual(
        Array(family === 'ipv4' ? 19 : 16).fill([family, 'output']),
      );
      expect(inboundExpectations(rich, family, atoms, inSpace(family)).map((e) => [e.family, e.hook])).toEqual(
        Array(family === 'ipv4' ? 11 : 9).fill([family, 'prerouting']),
      );
    }
  });

  it('DNS from the application to the listed server: TCP and UDP to port 53, from anyone but the proxy', () => {
    const dns = find(all(rich, 'ipv4'), 'ipv4/dns/app');
    const scope = { family: 'ipv4', hook: 'output', atoms } as const;
    expect(dns.regions.map((region) => regionJson(region, scope))).toMatchObject([
      {
        protocols: ['tcp', 'udp'],
        daddr: ['10.96.0.10/32'],
        dport: ['53'],
        uid: ['0-1336', '1338-4294967295'],
        gid: ['0-1336', '1338-4294967295'],
        oif: ['lo'],
      },
      {
        protocols: ['tcp', 'udp'],
        saddr: ['0.0.0.0/0'],
        daddr: ['10.96.0.10/32'],
        dport: ['53'],
        uid: ['0-1336', '1338-4294967295'],
        gid: ['0-1336', '1338-4294967295'],
        oif: ['kv0', 'any other interface'],
      },
    ]);
  });

  it('IPv6 DNS goes to the IPv6 server only: the IPv4 server is not read as an IPv6 number', () => {
    const dns = find(all(rich, 'ipv6'), 'ipv6/dns/app');
    const scope = { family: 'ipv6', hook: 'output', atoms } as const;
    expect(dns.regions.map((region) => regionJson(region, scope).daddr)).toEqual([['fd00::a/128'], ['fd00::a/128']]);
  });

  it('IPv6: the host loopback is ::1, not the IPv4 host-loopback range read as an IPv6 number', () => {
    const list = all(specFromFlags(['--mesh=istio']), 'ipv6');
    const notLoopback = [
      [0n, 0n],
      [2n, (1n << 128n) - 1n],
    ];
    expect(find(list, 'ipv6/outbound/proxy-loopback-to-pod').regions.map((region) => region.daddr)).toEqual([
      notLoopback,
    ]);
    expect(find(list, 'ipv6/outbound/proxy-loopback-other').regions.map((region) => region.daddr)).toEqual([
      notLoopback,
      notLoopback,
    ]);
  });

  it('several interfaces are listed, comma-separated, in the reasons', () => {
    const spec = specFromFlags(['--mesh=istio', '--exclude-interfaces=eth9,eth8', '--reroute-interfaces=kv0,kv1']);
    const reasons = all(spec, 'ipv4')
      .filter((expectation) => expectation.id.includes('-interface'))
      .map((expectation) => [expectation.id, expectation.because]);
    expect(reasons).toEqual([
      ['ipv4/outbound/excluded-interface', 'interfaces eth9, eth8 are excluded'],
      ['ipv4/inbound/excluded-interface', 'interfaces eth9, eth8 are excluded'],
      // Every range is included (the default), so nothing is left for rerouted-interface-other.
      [
        'ipv4/inbound/rerouted-interface',
        'TCP arriving on virtual interfaces kv0, kv1 for an included range goes to the outbound port',
      ],
    ]);
  });

  it('the proxy calling its own pod over loopback: TCP, its first uid, every port but the tunnel, DNS and excluded ones', () => {
    const list = all(specFromFlags(['--mesh=istio', '--dns-capture', '--dns-servers=10.96.0.10']), 'ipv4');
    // A server of this family only: DNS to it is captured.
    expect(find(list, 'ipv4/dns/app').regions).toHaveLength(2);
    const toPod = find(list, 'ipv4/outbound/proxy-loopback-to-pod');
    const scope = { family: 'ipv4', hook: 'output', atoms } as const;
    expect(toPod.regions.map((region) => regionJson(region, scope))).toMatchObject([
      {
        protocols: ['tcp'],
        daddr: [
          '0.0.0.0/2',
          '64.0.0.0/3',
          '96.0.0.0/4',
          '112.0.0.0/5',
          '120.0.0.0/6',
          '124.0.0.0/7',
          '126.0.0.0/8',
          '128.0.0.0/1',
        ],
        dport: ['1-52', '54-15007', '15009-15019', '15021-65535'],
        uid: ['1337'],
        gid: ['0-4294967295'],
        oif: ['lo'],
      },
    ]);
  });
});

describe('claims that depend on one option', () => {
  it('TPROXY: the app port is diverted, and the tunnel port has no claim of its own; DNS servers of the other family only: no DNS claim', () => {
    const spec = specFromFlags([
      '--mesh=istio',
      '--tproxy',
      '--exclude-outbound-gids=7',
      '--dns-capture',
      '--dns-servers=fd00::a',
    ]);
    expect(all(spec, 'ipv4').map((expectation) => [expectation.id, expectation.expected])).toEqual([
      ['ipv4/outbound/impossible', undefined],
      ['ipv4/outbound/passthrough-source', { kind: 'not-looped', inboundPort: 15006 }],
      ['ipv4/outbound/proxy-loopback-to-pod', { kind: 'redirect', port: 15006 }],
      ['ipv4/outbound/proxy-loopback-other', { kind: 'not-looped', inboundPort: 15006 }],
      ['ipv4/outbound/proxy-group-loopback', { kind: 'not-looped', inboundPort: 15006 }],
      ['ipv4/outbound/proxy-uid-1337', { kind: 'not-redirected' }],
      ['ipv4/outbound/proxy-gid-1337', { kind: 'not-redirected' }],
      ['ipv4/outbound/other-udp', undefined],
      ['ipv4/outbound/loopback-dns-port', undefined],
      ['ipv4/outbound/loopback', { kind: 'not-redirected' }],
      ['ipv4/outbound/excluded-port', { kind: 'not-redirected' }],
      ['ipv4/outbound/excluded-gid', { kind: 'not-redirected' }],
      ['ipv4/outbound/app', { kind: 'redirect', port: 15001 }],
      ['ipv4/inbound/loopback', undefined],
      ['ipv4/inbound/loopback-destination', undefined],
      ['ipv4/inbound/excluded-port', { kind: 'not-redirected' }],
      ['ipv4/inbound/app', { kind: 'tproxy', port: 15006 }],
    ]);
    expect(find(all(spec, 'ipv4'), 'ipv4/outbound/excluded-gid').because).toBe('excluded groups are not captured');
  });

  it('DNS capture to any server: the DNS claim covers every destination', () => {
    const dns = find(all(specFromFlags(['--mesh=istio', '--dns-capture']), 'ipv4'), 'ipv4/dns/app');
    const scope = { family: 'ipv4', hook: 'output', atoms } as const;
    // Over lo any address; elsewhere any but 127.0.0.0/8, which only lo reaches.
    const notLoopback = [
      '0.0.0.0/2',
      '64.0.0.0/3',
      '96.0.0.0/4',
      '112.0.0.0/5',
      '120.0.0.0/6',
      '124.0.0.0/7',
      '126.0.0.0/8',
      '128.0.0.0/1',
    ];
    expect(dns.regions.map((region) => regionJson(region, scope).daddr)).toEqual([['0.0.0.0/0'], notLoopback]);
  });

  it("Kuma's DNS rules first: the app's TCP DNS to the DNS port or left alone, the passthrough source's UDP DNS left to the mesh", () => {
    const kuma = all(specFromFlags(['--mesh=kuma', '--dns-capture']), 'ipv4');
    const tcp = find(kuma, 'ipv4/dns/app-tcp');
    expect(tcp.expected).toEqual({ kind: 'redirect-or-not', port: 15053 });
    const scope = { family: 'ipv4', hook: 'output', atoms } as const;
    expect(tcp.regions.map((region) => regionJson(region, scope).protocols)).toEqual([['tcp'], ['tcp']]);
    expect(find(kuma, 'ipv4/dns/app').regions.map((region) => regionJson(region, scope).protocols)).toEqual([
      ['udp'],
      ['udp'],
    ]);
    const passthrough = find(kuma, 'ipv4/outbound/passthrough-dns');
    expect(passthrough.expected).toBeUndefined();
    expect(passthrough.regions.map((region) => regionJson(region, scope))).toMatchObject([
      { protocols: ['udp'], saddr: ['127.0.0.6/32'], dport: ['53'], oif: ['lo'] },
    ]);
    // Istio's DNS rules do not come first: its TCP DNS is captured, no claim is relaxed.
    const istio = all(specFromFlags(['--mesh=istio', '--dns-capture']), 'ipv4').map((expectation) => expectation.id);
    expect(istio).not.toContain('ipv4/dns/app-tcp');
    expect(istio).not.toContain('ipv4/outbound/passthrough-dns');
    // Without DNS capture Kuma claims nothing of DNS.
    const quiet = all(specFromFlags(['--mesh=kuma']), 'ipv4').map((expectation) => expectation.id);
    expect(quiet.filter((id) => id.includes('dns'))).toEqual([]);
    // Nor with capture but no port to send it to (the flags refuse it; the claims do not rely on that).
    const portless = { ...specFromFlags(['--mesh=kuma', '--dns-capture']), dnsPort: 0 };
    const none = all(portless, 'ipv4').map((expectation) => expectation.id);
    expect(none.filter((id) => id.includes('/dns/') || id.endsWith('passthrough-dns'))).toEqual([]);
    expect(all(specFromFlags(['--mesh=kuma', '--dns-capture']), 'ipv4').map((e) => e.id)).toEqual(
      expect.arrayContaining(['ipv4/dns/app', 'ipv4/dns/app-tcp', 'ipv4/outbound/passthrough-dns']),
    );
    // What the operator reads beside each relaxed claim.
    expect(passthrough.because).toBe(
      "DNS over loopback from the proxy's passthrough source goes through the DNS rules, which the configuration leaves to the mesh",
    );
  });

  it('no proxy uid (the proxy known by its group only): no loopback-to-pod claims, the group still excluded', () => {
    const ids = all(specFromFlags(['--mesh=istio', '--proxy-uid=']), 'ipv4').map((expectation) => expectation.id);
    expect(ids.filter((id) => id.startsWith('ipv4/outbound/proxy'))).toEqual(['ipv4/outbound/proxy-gid-1337']);
  });

  it('no tunnel port: no tunnel-port claim', () => {
    const ids = all(specFromFlags(['--mesh=istio', '--inbound-tunnel-port=0']), 'ipv4').map(
      (expectation) => expectation.id,
    );
    expect(ids.filter((id) => id.startsWith('ipv4/inbound/'))).toEqual([
      'ipv4/inbound/loopback',
      'ipv4/inbound/loopback-destination',
      'ipv4/inbound/excluded-port',
      'ipv4/inbound/app',
    ]);
  });
});
