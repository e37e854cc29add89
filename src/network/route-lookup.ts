import { cidrContains } from '../addr/cidr.js';
import { sameIp, type IpAddress } from '../addr/ip.js';
import { LOCAL_TABLE, type PodNetwork, type PolicyRule, type RouteInfo } from './pod-network.js';

/**
 * The tables an unmarked packet (the probe's) looks up: those of the ip rules that match mark 0.
 * A table only marked packets reach (`ip rule fwmark 0x111/0xfff lookup 100`, Istio ambient's),
 * or that no rule names, is never looked up for it, whatever routes it holds (a `local` default
 * route via lo). Undefined when the rules were not read: every table counts.
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

/**
 * The route the kernel would pick for an unmarked packet to a destination, by longest prefix over
 * the tables its ip rules send it to but `local`. Other selectors of policy rules are
 * not modelled: pods use the main table.
 */
function lookupRoute(network: PodNetwork, destination: IpAddress): RouteInfo | undefined {
  let best: RouteInfo | undefined;
  const tables = unmarkedTables(network);
  for (const route of network.routes) {
    if (
      route.table === LOCAL_TABLE ||
      (tables !== undefined && !tables.has(route.table)) ||
      route.family !== destination.family
    )
      continue;
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
