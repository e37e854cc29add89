import { describe, expect, it } from 'vitest';
import { parseCidr, type Cidr } from '../../src/addr/cidr.js';
import { parseIp, type IpAddress } from '../../src/addr/ip.js';
import { markRouteFindings } from '../../src/network/mark-route.js';
import type { PodNetwork, PolicyRule, RouteInfo } from '../../src/network/pod-network.js';
import { routability } from '../../src/network/route-lookup.js';

const cidr = (text: string): Cidr => parseCidr(text) as Cidr;
const ip = (text: string): IpAddress => parseIp(text) as IpAddress;
const route = (table: number, type: RouteInfo['type'], destination: string, link: number): RouteInfo => ({
  family: 'ipv4',
  table,
  type,
  destination: cidr(destination),
  gateway: undefined,
  outputLinkIndex: link,
});
const rule = (table: number, priority: number, fwmark?: number, fwmask?: number): PolicyRule => ({
  family: 'ipv4',
  priority,
  table,
  fwmark,
  fwmask,
  invert: false,
});
const DEFAULT_RULES = [rule(255, 0), rule(254, 32766), rule(253, 32767)];

function ambientPod(rules: readonly PolicyRule[] | undefined, table100: readonly RouteInfo[]): PodNetwork {
  return {
    links: [
      { index: 1, name: 'lo', up: true, loopback: true },
      { index: 2, name: 'eth0', up: true, loopback: false },
    ],
    addresses: [],
    routes: [route(100, 'local', '0.0.0.0/0', 1), route(254, 'unicast', '0.0.0.0/0', 2), ...table100],
    ...(rules ? { rules } : {}),
  };
}
const AMBIENT_ROUTE = { mark: { value: 0x111, mask: 0xfff }, table: 100 };

describe('an unmarked socket meets only the tables its ip rules reach', () => {
  it('table 100, reached only by fwmark 0x111/0xfff, does not make the probe’s destinations local', () => {
    const network = ambientPod([...DEFAULT_RULES, rule(100, 32764, 0x111, 0xfff)], []);
    expect(routability(network, ip('192.0.2.1'))).toMatchObject({ routed: true, linkName: 'eth0' });
  });

  it('a table no rule names is never looked up', () => {
    expect(routability(ambientPod(DEFAULT_RULES, []), ip('192.0.2.1'))).toMatchObject({ routed: true });
  });

  it('without the rules read, the main table is taken first', () => {
    expect(routability(ambientPod(undefined, []), ip('192.0.2.1'))).toMatchObject({ routed: true, linkName: 'eth0' });
  });
});

describe('the ambient mark route', () => {
  it('whole: no finding', () => {
    const network = ambientPod([...DEFAULT_RULES, rule(100, 32764, 0x111, 0xfff)], []);
    expect(markRouteFindings(network, AMBIENT_ROUTE, ['ipv4'])).toEqual([]);
  });

  it('a rule with another mask, another table or inverted is not the rule', () => {
    for (const wrong of [
      rule(100, 32764, 0x111, 0xffffffff),
      rule(101, 32764, 0x111, 0xfff),
      { ...rule(100, 1, 0x111, 0xfff), invert: true },
    ])
      expect(markRouteFindings(ambientPod([...DEFAULT_RULES, wrong], []), AMBIENT_ROUTE, ['ipv4'])).toEqual([
        'IPv4: no ip rule `fwmark 0x111/0xfff lookup 100`',
      ]);
  });

  it('table 100’s default route must be local and via lo; IPv6 is checked on its own', () => {
    const network: PodNetwork = {
      ...ambientPod([...DEFAULT_RULES, rule(100, 32764, 0x111, 0xfff)], []),
      routes: [route(100, 'unicast', '0.0.0.0/0', 1), route(100, 'local', '0.0.0.0/0', 2)],
    };
    expect(markRouteFindings(network, AMBIENT_ROUTE, ['ipv4', 'ipv6'])).toEqual([
      'IPv4: table 100 has no route `local 0.0.0.0/0 dev lo`',
      'IPv6: no ip rule `fwmark 0x111/0xfff lookup 100`',
      'IPv6: table 100 has no route `local ::/0 dev lo`',
    ]);
  });
});
