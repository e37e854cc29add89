import { cidrContains } from '../addr/cidr.js';
import { sameIp, type IpAddress } from '../addr/ip.js';
import { LOCAL_TABLE, type PodNetwork, type PolicyRule, type RouteInfo } from './pod-network.js';

/** The kernel's main table: the one an unmarked packet reaches by the default rules. */
const MAIN_TABLE = 254;

/**
 * The route the kernel would pick for a destination: the main table's longest prefix, else the
 * longest prefix over every other table but `local`. Policy routing rules are not modelled; a
 * table other than main is reached only through one, as Istio ambient's table 100 (a local
 * default route, for packets marked 0x111 only) is: the probe's unmarked packets never take it.
 */
function lookupRoute(network: PodNetwork, destination: IpAddress): RouteInfo | undefined {
  const tables = unmarkedTables(network);
  const reached = (table: number): boolean => table !== LOCAL_TABLE && (tables === undefined || tables.has(table));
  return (
    longestMatch(network, destination, (table) => table === MAIN_TABLE && reached(table)) ??
    longestMatch(network, destination, reached)
  );
}

/**
 * With the ip rules read (rtnetlink): the tables an unmarked packet looks up, those of the rules
 * that match mark 0. A table only marked packets reach, or that no rule names, is never looked up
 * for the probe, whatever routes it holds. Undefined when the rules were not read.
 */
function unmarkedTables(network: PodNetwork): Set<number | undefined> | undefined {
  if (network.rules === undefined) return undefined;
  const reachesUnmarked = (rule: PolicyRule): boolean => {
    if (rule.fwmark === undefined) return true;
    const matchesZero = (rule.fwmark & (rule.fwmask ?? 0xffffffff)) === 0;
    return rule.invert ? !matchesZero : matchesZero;
  };
  return new Set(network.rules.filter(reachesUnmarked).map((rule) => rule.table));
}

function longestMatch(
  network: PodNetwork,
  destination: IpAddress,
  inTable: (table: number) => boolean,
): RouteInfo | undefined {
  let best: RouteInfo | undefined;
  for (const route of network.routes) {
    if (!inTable(route.table) || route.family !== destination.family) continue;
    if (!cidrContains(route.destination, destination)) continue;
    if (!best || route.destination.prefix > best.destination.prefix) best = route;
  }
  return best;
}

/** True when the destination is one of this namespace's own addresses (delivered over `lo`). */
export function isLocalAddress(network: PodNetwork, destination: IpAddress): boolean {
  if (network.addresses.some((entry) => sameIp(entry.address, destination))) return true;
  return network.routes.some(
    (route) => route.table === LOCAL_TABLE && route.type === 'local' && cidrContains(route.destination, destination),
  );
}

export type Routability =
  | { readonly routed: true; readonly route: RouteInfo; readonly linkName: string }
  | { readonly routed: false; readonly why: string };

/** Whether a connect() to the destination would leave through a real, up interface. */
export function routability(network: PodNetwork, destination: IpAddress): Routability {
  if (isLocalAddress(network, destination)) return { routed: false, why: 'it is an address of the pod itself' };
  const route = lookupRoute(network, destination);
  if (!route) return { routed: false, why: 'no route covers it' };
  if (route.type !== 'unicast') return { routed: false, why: `the route covering it is of type ${route.type}` };
  const link = network.links.find((entry) => entry.index === route.outputLinkIndex);
  if (!link) return { routed: false, why: 'its route names no interface' };
  if (!link.up) return { routed: false, why: `its route leaves through ${link.name}, which is down` };
  if (link.loopback) return { routed: false, why: 'its route leaves through the loopback interface' };
  return { routed: true, route, linkName: link.name };
}
