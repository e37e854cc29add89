import { execFileSync, type ChildProcess } from 'node:child_process';
import { ambientGolden, HEAD_TAG, keepRules, restoreTexts, ZTUNNEL_STANDIN } from './ambient-goldens.js';
import type { PodNamespace } from './pod-namespace.js';

export { AMBIENT_TAGS } from './ambient-goldens.js';

/**
 * Istio ambient's in-pod rules written into a test pod from istio-cni's own goldens (read by
 * ambient-goldens.ts), and a ztunnel stand-in that binds ztunnel's ports there.
 */
export type AmbientBackend = 'iptables-nft' | 'iptables-legacy' | 'nft';

export interface AmbientRulesOptions {
  readonly tag?: string;
  /** The golden's name without `.golden`: default, default_ipv6, dns_pod_enabled_and_off_globally, ... */
  readonly name?: string;
  readonly backend?: AmbientBackend;
  /** Which families' tables to write (iptables goldens keep IPv4 and IPv6 one after the other). */
  readonly families?: readonly ('ipv4' | 'ipv6')[];
  /** Rule lines to keep; the others are left out (tables, chains and jumps stay). */
  readonly keep?: (rule: string) => boolean;
  /** istio-cni's ip rule and table 100 (iptables_linux.go); on unless false. */
  readonly routing?: boolean;
}

/** Writes a golden's rules into the pod, as istio-cni's node agent does when it enrols the pod. */
export function applyAmbientRules(pod: PodNamespace, options: AmbientRulesOptions = {}): void {
  const tag = options.tag ?? HEAD_TAG;
  const backend = options.backend ?? 'iptables-nft';
  const families = options.families ?? ['ipv4'];
  const name = options.name ?? (families.includes('ipv6') ? 'default_ipv6' : 'default');
  const keep = options.keep ?? (() => true);
  if (backend === 'nft') {
    const text = keepRules(ambientGolden(tag, 'nftables', name), keep);
    execFileSync('ip', ['netns', 'exec', pod.pod, 'nft', '-f', '-'], { input: text });
  } else {
    const golden = ambientGolden(tag, 'iptables', name);
    if (/^ip6?tables /m.test(golden)) {
      // 1.21/1.22's *_ipv6 argv goldens give the IPv4 tools the IPv6 host-probe address, which
      // the kernel refuses (upstream's test never ran them): IPv4 comes from the plain golden.
      const v4 = name.endsWith('_ipv6') ? ambientGolden(tag, 'iptables', name.slice(0, -5)) : golden;
      if (families.includes('ipv4')) applyArgvGolden(pod, keepRules(v4, keep), backend, ['ipv4']);
      if (families.includes('ipv6')) applyArgvGolden(pod, keepRules(golden, keep), backend, ['ipv6']);
    } else {
      const texts = restoreTexts(golden);
      for (const family of families) {
        const text = keepRules(texts[family], keep);
        if (text.trim() === '') throw new Error(`${tag}/${name}.golden has no ${family} tables`);
        pod.applyRulesText(text, backend === 'iptables-nft' ? 'nft' : 'legacy', family);
      }
    }
  }
  if (options.routing !== false) applyAmbientRouting(pod, families);
}

/** 1.21.0 and 1.22.0 goldens are `iptables ...` argv lines: each is run with the chosen backend. */
function applyArgvGolden(
  pod: PodNamespace,
  golden: string,
  backend: 'iptables-nft' | 'iptables-legacy',
  families: readonly ('ipv4' | 'ipv6')[],
): void {
  const suffix = backend === 'iptables-nft' ? 'nft' : 'legacy';
  for (const line of golden.split('\n')) {
    const [tool, ...args] = line.trim().split(/\s+/);
    if (tool !== 'iptables' && tool !== 'ip6tables') continue;
    if (!families.includes(tool === 'iptables' ? 'ipv4' : 'ipv6')) continue;
    pod.exec(`${tool}-${suffix}`, ...args);
  }
}

/** `ip rule add fwmark 0x111/0xfff pref 32764 lookup 100` and table 100's local default route via lo. */
function applyAmbientRouting(pod: PodNamespace, families: readonly ('ipv4' | 'ipv6')[]): void {
  for (const family of families) {
    const flag = family === 'ipv4' ? '-4' : '-6';
    pod.exec('ip', flag, 'rule', 'add', 'fwmark', '0x111/0xfff', 'pref', '32764', 'lookup', '100');
    pod.exec(
      'ip',
      flag,
      'route',
      'add',
      'local',
      family === 'ipv4' ? '0.0.0.0/0' : '::/0',
      'dev',
      'lo',
      'table',
      '100',
    );
  }
}

/**
 * Starts the ztunnel stand-in in the pod and waits until it listens. `dual` binds [::] as
 * ztunnel does with IPv6 enabled; `ipv4` binds 0.0.0.0 (ztunnel with IPv6 disabled).
 */
export async function startZtunnel(
  pod: PodNamespace,
  options: { family?: 'dual' | 'ipv4' | 'ipv6'; ports?: readonly number[] } = {},
): Promise<ChildProcess> {
  const ports = options.ports ?? [15001, 15006, 15008, 15053];
  const child = pod.spawnInPod([
    '/usr/bin/python3',
    ZTUNNEL_STANDIN,
    '--family',
    options.family ?? 'dual',
    '--ports',
    ports.join(','),
    '--lifetime',
    '300',
  ]);
  for (const port of ports) await pod.untilListening('pod', port);
  return child;
}
