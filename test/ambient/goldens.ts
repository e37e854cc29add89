import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * istio-cni's own goldens of the in-pod (ambient) rules, loaded into a real namespace by the real
 * tools and read back as an operator would dump them. The upstream tests' configurations (read in
 * `cni/pkg/iptables/iptables_test.go` and `cni/pkg/nftables/nftables_test.go` of each tag) are
 * carried by the golden's name (`GetCommonInPodTestCases` in `common_test.go` from 1.25): `default`,
 * `tproxy` and `dns_pod_enabled_*` capture DNS, the others do not, `ingress*` bypasses inbound capture, `virtual_interfaces*` reroutes fake1s0f0 and fake1s0f1,
 * `*_ipv6` enables IPv6 with the test's host-probe address.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/meshes/istio-ambient');
/** The IPv6 host-probe address the upstream tests pass (not the product default). */
export const TEST_PROBE_V6 = 'e9ac:1e77:90ca:399f:4d6d:ece2:2f9b:3164';
const VIRTUAL_INTERFACES = ['fake1s0f0', 'fake1s0f1'];

export interface AmbientGolden {
  readonly tag: string;
  readonly backend: 'iptables' | 'nftables';
  readonly name: string;
  readonly file: string;
  readonly text: string;
}

/** Every pod-side golden of every tag (hostprobe* are the node's rules, not the pod's). */
export function ambientGoldens(): AmbientGolden[] {
  const out: AmbientGolden[] = [];
  for (const tag of readdirSync(ROOT).sort()) {
    for (const backend of ['iptables', 'nftables'] as const) {
      let names: string[] = [];
      try {
        names = readdirSync(path.join(ROOT, tag, backend));
      } catch {
        continue;
      }
      for (const file of names.sort()) {
        const name = file.replace(/\.golden$/, '');
        if (name.startsWith('hostprobe')) continue;
        const full = path.join(ROOT, tag, backend, file);
        out.push({ tag, backend, name, file: full, text: readFileSync(full, 'utf8') });
      }
    }
  }
  return out;
}

export const isIpv6 = (golden: AmbientGolden): boolean => golden.name.endsWith('_ipv6');
/** Inbound by TPROXY in mangle: every golden up to 1.23.0, and 1.24.0's `tproxy` option. */
const isTproxy = (golden: AmbientGolden): boolean =>
  golden.name.startsWith('tproxy') || ['1.21.0', '1.22.0', '1.23.0'].includes(golden.tag);
/** `default`, `tproxy` and `dns_pod_enabled_*` set RedirectDNS (or the pod's override); the rest leave it off. */
const capturesDns = (golden: AmbientGolden): boolean => /^(default|tproxy|dns_pod_enabled)/.test(golden.name);
/** 1.21 and 1.22 take one probe address, the test's IPv6 one when IPv6 is on (used by ip6tables and iptables alike). */
const oneProbe = (golden: AmbientGolden): boolean => ['1.21.0', '1.22.0'].includes(golden.tag);
const bypassesInbound = (golden: AmbientGolden): boolean => golden.name.startsWith('ingress');
const reroutes = (golden: AmbientGolden): boolean => golden.name.includes('virtual_interfaces');

/** The explain flags that state the upstream test's configuration. */
export function goldenFlags(golden: AmbientGolden): string[] {
  const flags = ['--mesh=istio-ambient', `--family=${isIpv6(golden) ? 'dual' : 'ipv4'}`];
  const probes = oneProbe(golden)
    ? [isIpv6(golden) ? TEST_PROBE_V6 : '169.254.7.127']
    : ['169.254.7.127', TEST_PROBE_V6];
  flags.push(`--host-probe-addresses=${probes.join(',')}`);
  if (isTproxy(golden)) flags.push('--tproxy');
  if (bypassesInbound(golden)) flags.push('--include-inbound-ports=');
  if (reroutes(golden)) flags.push(`--reroute-interfaces=${VIRTUAL_INTERFACES.join(',')}`);
  return flags;
}

/** INTERLOCK_DNS_CAPTURE as the test's configuration says (a switch is turned off only by env). */
export function goldenEnv(golden: AmbientGolden): Record<string, string> {
  return { INTERLOCK_DNS_CAPTURE: capturesDns(golden) ? 'true' : 'false' };
}

export type IptablesBackend = 'nft' | 'legacy';

/** What loading refused: istio-cni 1.21-1.23 pass the IPv6 probe address to `iptables` too. */
export interface Loaded {
  readonly rejected: readonly string[];
}

/** Runs `argv` inside the namespace; returns false when the tool refuses it. */
function runIn(namespace: string, argv: string[], input?: string): boolean {
  try {
    execFileSync('ip', ['netns', 'exec', namespace, ...argv], {
      stdio: ['pipe', 'ignore', 'ignore'],
      ...(input === undefined ? {} : { input }),
    });
    return true;
  } catch {
    return false;
  }
}

/** The golden's commands (argv lines) or restore blocks, applied with the chosen backend. */
export function loadIptablesGolden(namespace: string, golden: AmbientGolden, backend: IptablesBackend): Loaded {
  const lines = golden.text.split('\n').filter((line) => line.trim() !== '');
  if (lines.some((line) => /^ip6?tables /.test(line))) {
    const rejected: string[] = [];
    for (const line of lines) {
      const [tool, ...args] = line.split(' ') as [string, ...string[]];
      if (!runIn(namespace, [`${tool}-${backend}`, ...args])) rejected.push(line);
    }
    return { rejected };
  }
  for (const [family, text] of restoreBlocks(lines)) {
    const tool = `${family === 'ipv4' ? 'iptables' : 'ip6tables'}-${backend}-restore`;
    if (!runIn(namespace, [tool, '--noflush'], text)) throw new Error(`${golden.file}: ${tool} refused it`);
  }
  return { rejected: [] };
}

/**
 * 1.24 and later: `* table` blocks, IPv4's first; a table seen again starts IPv6's. The
 * `iptables-save` / `ip6tables-save` lines are the harness's record of its dumps, not rules.
 */
function restoreBlocks(lines: readonly string[]): Array<['ipv4' | 'ipv6', string]> {
  const blocks: Record<'ipv4' | 'ipv6', string[]> = { ipv4: [], ipv6: [] };
  const seen = new Set<string>();
  let family: 'ipv4' | 'ipv6' = 'ipv4';
  for (const line of lines) {
    if (line === 'iptables-save' || line === 'ip6tables-save') continue;
    const table = /^\* ?(\w+)$/.exec(line);
    if (table) {
      if (seen.has(table[1] as string)) family = 'ipv6';
      if (family === 'ipv4') seen.add(table[1] as string);
      blocks[family].push(`*${table[1] as string}`);
      continue;
    }
    blocks[family].push(line);
  }
  return (['ipv4', 'ipv6'] as const)
    .filter((f) => blocks[f].length > 0)
    .map((f) => [f, `${blocks[f].join('\n')}\n`] as ['ipv4' | 'ipv6', string]);
}

export function loadNftGolden(namespace: string, golden: AmbientGolden): void {
  if (!runIn(namespace, ['nft', '-f', '-'], golden.text)) throw new Error(`${golden.file}: nft -f refused it`);
}

/** Empties both backends and both families. */
export function flushAll(namespace: string): void {
  runIn(namespace, ['nft', 'flush', 'ruleset']);
  for (const tool of ['iptables-legacy', 'ip6tables-legacy'])
    for (const table of ['raw', 'mangle', 'nat', 'filter']) {
      runIn(namespace, [tool, '-t', table, '-F']);
      runIn(namespace, [tool, '-t', table, '-X']);
    }
}

export function dumpOf(namespace: string, argv: string[]): string {
  return execFileSync('ip', ['netns', 'exec', namespace, ...argv], { encoding: 'utf8' });
}
