import type { Family } from '../addr/ip.js';
import type { MarkRoute } from '../config/interception.js';
import { familyLabel } from './assess-pod-network.js';
import type { PodNetwork } from './pod-network.js';

const hex = (value: number): string => `0x${value.toString(16)}`;

/** `fwmark 0x111/0xfff lookup 100`, as `ip rule` prints it. */
export function describeMarkRule(route: MarkRoute): string {
  return `fwmark ${hex(route.mark.value)}/${hex(route.mark.mask)} lookup ${route.table}`;
}

const DEFAULT_DESTINATION: Readonly<Record<Family, string>> = { ipv4: '0.0.0.0/0', ipv6: '::/0' };

/**
 * What the pod's policy routing lacks for the mesh's marked traffic, one sentence per missing
 * piece and family (empty when nothing does): the ip rule sending marked packets to the table, and
 * the table's `local` default route via lo that delivers them to the proxy's sockets (istio-cni
 * `cni/pkg/iptables/iptables_linux.go`). Without them TPROXY'd and mark-restored packets are
 * routed out of the pod instead.
 */
export function markRouteFindings(network: PodNetwork, route: MarkRoute, families: readonly Family[]): string[] {
  const rules = network.rules ?? [];
  const loopbacks = new Set(network.links.filter((link) => link.loopback).map((link) => link.index));
  const findings: string[] = [];
  for (const family of families) {
    const label = familyLabel(family);
    const rule = rules.find(
      (candidate) =>
        candidate.family === family &&
        !candidate.invert &&
        candidate.table === route.table &&
        candidate.fwmark === route.mark.value &&
        candidate.fwmask === route.mark.mask,
    );
    if (!rule) findings.push(`${label}: no ip rule \`${describeMarkRule(route)}\``);
    const local = network.routes.some(
      (entry) =>
        entry.family === family &&
        entry.table === route.table &&
        entry.type === 'local' &&
        entry.destination.prefix === 0 &&
        entry.outputLinkIndex !== undefined &&
        loopbacks.has(entry.outputLinkIndex),
    );
    if (!local)
      findings.push(`${label}: table ${route.table} has no route \`local ${DEFAULT_DESTINATION[family]} dev lo\``);
  }
  return findings;
}
