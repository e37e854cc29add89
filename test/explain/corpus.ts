import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Helpers for the corpus tests: the real dumps under test/fixtures/corpus (see its README). */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CORPUS = path.resolve(repoRoot, 'test/fixtures/corpus');

export interface CorpusCase {
  readonly dir: string;
  readonly mesh: string;
  readonly config: Readonly<Record<string, unknown>>;
}

export function loadManifest(): CorpusCase[] {
  const manifest = JSON.parse(readFileSync(path.join(CORPUS, 'manifest.json'), 'utf8')) as { cases: CorpusCase[] };
  return manifest.cases;
}

/** One backend's view of a case: the files `interlock explain` is given. */
export interface DumpSet {
  readonly name: 'iptables-nft' | 'iptables-legacy' | 'nftables';
  /** explain flag -> absolute file path */
  readonly files: ReadonlyArray<readonly [string, string]>;
}

/**
 * Each iptables case was applied once with the nft backend and once with the legacy backend, so
 * those are two installations; the nft one is read as the operator would (iptables-nft-save for
 * both families plus `nft -j list ruleset`, which lists the same tables again).
 */
export function dumpSets(testCase: CorpusCase): DumpSet[] {
  const file = (name: string): string => path.join(CORPUS, testCase.dir, name);
  const sets: DumpSet[] = [];
  if (existsSync(file('iptables-nft-save.v4.txt'))) {
    sets.push({
      name: 'iptables-nft',
      files: [
        ['iptables-save', file('iptables-nft-save.v4.txt')],
        ['ip6tables-save', file('iptables-nft-save.v6.txt')],
        ['nft-ruleset', file('nft-list-ruleset.json')],
      ],
    });
    sets.push({
      name: 'iptables-legacy',
      files: [
        ['iptables-legacy-save', file('iptables-legacy-save.v4.txt')],
        ['ip6tables-legacy-save', file('iptables-legacy-save.v6.txt')],
      ],
    });
  } else {
    sets.push({ name: 'nftables', files: [['nft-ruleset', file('nft-list-ruleset.json')]] });
  }
  return sets;
}

function text(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}

/** The first `--uid-owner` / `--gid-owner` the upstream fixture names (for "custom (see rules)"). */
function fixtureOwner(testCase: CorpusCase, option: '--uid-owner' | '--gid-owner'): string {
  const golden = readFileSync(path.join(CORPUS, testCase.dir, 'source.golden'), 'utf8');
  const match = new RegExp(`${option} (\\d+)`).exec(golden);
  if (!match) throw new Error(`${testCase.dir}: no ${option} in source.golden`);
  return match[1] as string;
}

/**
 * The manifest's mesh configuration as interlock flags: every option passed explicitly, since a
 * flag replaces the preset's value. Returns the flags and the families the pod has.
 */
export function flagsFor(testCase: CorpusCase): { argv: string[]; families: string } {
  const c = testCase.config;
  if (testCase.mesh === 'linkerd') {
    const argv = [
      '--mesh=linkerd',
      `--inbound-port=${text(c['--incoming-proxy-port'])}`,
      `--outbound-port=${text(c['--outgoing-proxy-port'])}`,
      `--proxy-uid=${text(c['--proxy-uid'])}`,
      `--proxy-gid=${text(c['--proxy-gid'])}`,
      `--exclude-inbound-ports=${text(c['--inbound-ports-to-ignore'])}`,
      `--exclude-outbound-ports=${text(c['--outbound-ports-to-ignore'])}`,
      // The manifest annotates the subnets in parentheses; the list is the part before.
      `--exclude-inbound-cidrs=${text(c['--subnets-to-ignore']).split(' ')[0] ?? ''}`,
      `--include-inbound-ports=${c['--ports-to-redirect'] === undefined ? '*' : text(c['--ports-to-redirect'])}`,
    ];
    return { argv, families: c['--ipv6'] === true ? 'dual' : 'ipv4' };
  }
  if (testCase.dir.startsWith('istio-cni/')) {
    // The CNI plugin's defaults (see the manifest's writer): -b '*' -d 15090,15021,15020, outbound-exclude 15020.
    const annotations = (c['annotations'] ?? {}) as Record<string, string>;
    const env = (c['proxyEnv'] ?? {}) as Record<string, string>;
    const custom = c['proxyUID'] !== undefined;
    const extraInboundExcludes = testCase.dir === 'istio-cni/status-ports' ? ['22'] : [];
    const argv = [
      '--mesh=istio',
      `--proxy-uid=${custom ? fixtureOwner(testCase, '--uid-owner') : '1337'}`,
      `--proxy-gid=${custom ? fixtureOwner(testCase, '--gid-owner') : '1337'}`,
      `--include-inbound-ports=${annotations['traffic.sidecar.istio.io/includeInboundPorts'] ?? '*'}`,
      `--exclude-inbound-ports=${['15090,15021,15020', ...extraInboundExcludes, annotations['traffic.sidecar.istio.io/excludeInboundPorts'] ?? ''].filter((v) => v !== '').join(',')}`,
      // The annotation replaces the plugin's default outbound exclusion (15020) rather than adding to it.
      `--exclude-outbound-ports=${annotations['traffic.sidecar.istio.io/excludeOutboundPorts'] ?? '15020'}`,
      `--include-outbound-cidrs=${annotations['traffic.sidecar.istio.io/includeOutboundIPRanges'] ?? '*'}`,
      `--exclude-outbound-cidrs=${annotations['traffic.sidecar.istio.io/excludeOutboundIPRanges'] ?? ''}`,
    ];
    if (annotations['sidecar.istio.io/interceptionMode'] === 'TPROXY') argv.push('--tproxy');
    if (env['ISTIO_META_DNS_CAPTURE'] === 'true') argv.push('--dns-capture');
    if (env['INVALID_DROP'] === 'true') argv.push('--drop-invalid');
    return { argv, families: 'ipv4' };
  }
  const servers = [
    ...((c['DNSServersV4'] as string[] | undefined) ?? []),
    ...((c['DNSServersV6'] as string[] | undefined) ?? []),
  ];
  const argv = [
    '--mesh=istio',
    // Keys a case leaves out take the upstream test's defaults.
    `--outbound-port=${text(c['ProxyPort'] ?? 15001)}`,
    `--inbound-port=${text(c['InboundCapturePort'] ?? 15006)}`,
    `--inbound-tunnel-port=${text(c['InboundTunnelPort'] ?? 15008)}`,
    `--proxy-uid=${text(c['ProxyUID'] ?? '1337')}`,
    `--proxy-gid=${text(c['ProxyGID'] ?? '1337')}`,
    `--host-loopback-cidr=${text(c['HostIPv4LoopbackCidr'] ?? '127.0.0.1/32')}`,
    `--include-inbound-ports=${text(c['InboundPortsInclude'])}`,
    `--exclude-inbound-ports=${text(c['InboundPortsExclude'])}`,
    `--include-outbound-cidrs=${text(c['OutboundIPRangesInclude'])}`,
    `--exclude-outbound-cidrs=${text(c['OutboundIPRangesExclude'])}`,
    `--include-outbound-ports=${text(c['OutboundPortsInclude'])}`,
    `--exclude-outbound-ports=${text(c['OutboundPortsExclude'])}`,
    `--exclude-interfaces=${text(c['ExcludeInterfaces'])}`,
    `--reroute-interfaces=${text(c['RerouteVirtualInterfaces'])}`,
    `--include-outbound-gids=${c['OwnerGroupsInclude'] === undefined ? '*' : text(c['OwnerGroupsInclude'])}`,
    `--exclude-outbound-gids=${text(c['OwnerGroupsExclude'])}`,
  ];
  if (c['InboundInterceptionMode'] === 'TPROXY') argv.push('--tproxy');
  // istio-iptables captures DNS only to the listed servers: RedirectDNS with none captures nothing.
  if (c['RedirectDNS'] === true && servers.length > 0) argv.push('--dns-capture', `--dns-servers=${servers.join(',')}`);
  if (c['DropInvalid'] === true) argv.push('--drop-invalid');
  return { argv, families: c['EnableIPv6'] === true ? 'dual' : 'ipv4' };
}

export function explainArgv(testCase: CorpusCase, set: DumpSet, extra: readonly string[] = []): string[] {
  const { argv, families } = flagsFor(testCase);
  return [...argv, `--family=${families}`, ...set.files.map(([flag, file]) => `--${flag}=${file}`), ...extra];
}
