import { parseCidr } from '../../src/addr/cidr.js';
import { parseIp } from '../../src/addr/ip.js';
import type { AddressInfo, PodNetwork, RouteInfo } from '../../src/network/pod-network.js';

/** A pod network as rtnetlink would report it: lo + eth0 (index 2), like a CNI leaves it. */
export function podNetwork(
  options: {
    v4?: string;
    v6?: string;
    default4?: string;
    default6?: string;
    extraRoutes?: RouteInfo[];
    eth0Up?: boolean;
    tentative6?: boolean;
  } = {},
): PodNetwork {
  const addresses: AddressInfo[] = [
    { linkIndex: 1, address: parseIp('127.0.0.1')!, prefix: 8, scope: 'host', usable: true, tentative: false },
    { linkIndex: 1, address: parseIp('::1')!, prefix: 128, scope: 'host', usable: true, tentative: false },
  ];
  const routes: RouteInfo[] = [];
  const route = (
    cidr: string,
    gateway?: string,
    type: RouteInfo['type'] = 'unicast',
    table = 254,
    oif = 2,
  ): RouteInfo => {
    const destination = parseCidr(cidr)!;
    return {
      family: destination.family,
      table,
      type,
      destination,
      gateway: gateway ? parseIp(gateway) : undefined,
      outputLinkIndex: oif,
    };
  };
  if (options.v4) {
    const [address, prefix] = options.v4.split('/');
    addresses.push({
      linkIndex: 2,
      address: parseIp(address!)!,
      prefix: Number(prefix),
      scope: 'global',
      usable: true,
      tentative: false,
    });
    routes.push(route(options.v4));
    routes.push(route(`${address}/32`, undefined, 'local', 255));
  }
  if (options.v6) {
    const [address, prefix] = options.v6.split('/');
    addresses.push({
      linkIndex: 2,
      address: parseIp(address!)!,
      prefix: Number(prefix),
      scope: 'global',
      usable: !options.tentative6,
      tentative: Boolean(options.tentative6),
    });
    routes.push(route(options.v6));
  }
  if (options.default4) routes.push(route('0.0.0.0/0', options.default4));
  if (options.default6) routes.push(route('::/0', options.default6));
  routes.push(route('127.0.0.0/8', undefined, 'local', 255, 1));
  routes.push(...(options.extraRoutes ?? []));
  return {
    links: [
      { index: 1, name: 'lo', up: true, loopback: true },
      { index: 2, name: 'eth0', up: options.eth0Up ?? true, loopback: false },
    ],
    addresses,
    routes,
  };
}

export function extraRoute(cidr: string, gateway: string | undefined): RouteInfo {
  const destination = parseCidr(cidr)!;
  return {
    family: destination.family,
    table: 254,
    type: 'unicast',
    destination,
    gateway: gateway ? parseIp(gateway) : undefined,
    outputLinkIndex: 2,
  };
}
