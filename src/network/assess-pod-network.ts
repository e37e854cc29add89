import { formatIp, type Family } from '../addr/ip.js';
import type { FamilyMode } from '../config/validate-config.js';
import { LOCAL_TABLE, type AddressInfo, type PodNetwork } from './pod-network.js';

export interface FamilyNetwork {
  readonly family: Family;
  readonly addresses: readonly AddressInfo[];
  readonly interfaces: readonly string[];
  readonly hasRoute: boolean;
  /** Why the family cannot carry traffic yet; undefined when it can. */
  readonly problem: string | undefined;
  /** The family has an address the primary CNI assigned, but none usable yet (or ever: DAD failed). */
  readonly assignedButUnusable: boolean;
  /** Only tentative addresses: duplicate address detection may still finish within the deadline. */
  readonly pending: boolean;
}

export interface NetworkAssessment {
  readonly loopbackUp: boolean;
  readonly perFamily: Readonly<Record<Family, FamilyNetwork>>;
  /** Families to prove, given --family and what the pod has. */
  readonly familiesToProve: readonly Family[];
  /** Problems that fail the pod: the primary CNI did not (fully) run. */
  readonly problems: readonly string[];
  /** Some family to prove is only waiting for duplicate address detection: worth waiting for. */
  readonly pending: boolean;
}

const FAMILY_LABEL: Readonly<Record<Family, string>> = { ipv4: 'IPv4', ipv6: 'IPv6' };

export function familyLabel(family: Family): string {
  return FAMILY_LABEL[family];
}

/**
 * Decides which families the pod really has. A family counts only with an up, non-loopback
 * interface carrying a usable global address and a unicast route out: that is what the
 * primary CNI's ADD leaves behind.
 */
export function assessPodNetwork(network: PodNetwork, mode: FamilyMode): NetworkAssessment {
  const loopback = network.links.find((link) => link.loopback);
  const loopbackUp = Boolean(loopback?.up);
  const perFamily = { ipv4: familyNetwork(network, 'ipv4'), ipv6: familyNetwork(network, 'ipv6') };
  const problems: string[] = [];
  if (!loopbackUp) problems.push('the loopback interface is missing or down');

  let familiesToProve: Family[];
  if (mode === 'auto') {
    // A family with an assigned address is the pod's even while DAD runs: never dropped, so a
    // tentative IPv6 address is waited for and proven rather than skipped.
    familiesToProve = (['ipv4', 'ipv6'] as const).filter(
      (family) => perFamily[family].problem === undefined || perFamily[family].assignedButUnusable,
    );
    for (const family of familiesToProve) {
      const problem = perFamily[family].problem;
      if (problem !== undefined) problems.push(problem);
    }
    if (familiesToProve.length === 0) {
      problems.push(`no family is usable: ${perFamily.ipv4.problem}; ${perFamily.ipv6.problem}`);
    }
  } else {
    familiesToProve = mode === 'dual' ? ['ipv4', 'ipv6'] : [mode];
    for (const family of familiesToProve) {
      const problem = perFamily[family].problem;
      if (problem !== undefined) problems.push(problem);
    }
  }
  const pending = familiesToProve.some((family) => perFamily[family].pending);
  return { loopbackUp, perFamily, familiesToProve, problems, pending };
}

function familyNetwork(network: PodNetwork, family: Family): FamilyNetwork {
  const upLinks = new Map(
    network.links.filter((link) => link.up && !link.loopback).map((link) => [link.index, link.name]),
  );
  const addresses = network.addresses.filter(
    (entry) => entry.address.family === family && entry.scope === 'global' && upLinks.has(entry.linkIndex),
  );
  const usable = addresses.filter((entry) => entry.usable);
  const hasRoute = network.routes.some(
    (route) =>
      route.family === family &&
      route.table !== LOCAL_TABLE &&
      route.type === 'unicast' &&
      route.outputLinkIndex !== undefined &&
      upLinks.has(route.outputLinkIndex),
  );
  const label = FAMILY_LABEL[family];
  let problem: string | undefined;
  if (addresses.length === 0) problem = `${label}: no global address on any up, non-loopback interface`;
  else if (usable.length === 0) {
    const tentative = addresses.find((entry) => entry.tentative);
    problem = tentative
      ? `${label}: address ${describe(tentative)} is still tentative (duplicate address detection did not finish in time)`
      : `${label}: address ${describe(addresses[0])} failed duplicate address detection (another host has it)`;
  } else if (!hasRoute) problem = `${label}: address ${describe(usable[0])} but no route out of the pod`;
  return {
    family,
    addresses: usable,
    interfaces: [...new Set(usable.map((entry) => upLinks.get(entry.linkIndex) ?? '?'))],
    hasRoute,
    problem,
    assignedButUnusable: addresses.length > 0 && usable.length === 0,
    pending: usable.length === 0 && addresses.some((entry) => entry.tentative),
  };
}

function describe(entry: AddressInfo | undefined): string {
  return entry ? `${formatIp(entry.address)}/${entry.prefix}` : '?';
}

export function describeFamilyNetwork(network: FamilyNetwork): string {
  if (network.problem) return network.problem;
  return `${FAMILY_LABEL[network.family]}: ${network.addresses.map((entry) => `${formatIp(entry.address)}/${entry.prefix}`).join(', ')} on ${network.interfaces.join(', ')}`;
}
