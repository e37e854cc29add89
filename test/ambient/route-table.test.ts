import { describe, expect, it } from 'vitest';
import { parseCidr } from '../../src/addr/cidr.js';
import { parseIp } from '../../src/addr/ip.js';
import type { RouteInfo } from '../../src/network/pod-network.js';
import { routability } from '../../src/network/route-lookup.js';
import { podNetwork } from '../unit/pod-network-fixtures.js';

// istio-cni adds, in every ambient pod, `ip rule fwmark 0x111/0xfff lookup 100` and a local
// default route via lo in table 100 (iptables_linux.go): only ztunnel's marked packets take it.
const table100 = (cidr: string): RouteInfo => ({
  family: parseCidr(cidr)!.family,
  table: 100,
  type: 'local',
  destination: parseCidr(cidr)!,
  gateway: undefined,
  outputLinkIndex: 1,
});

describe('route lookup with ambient table 100', () => {
  it("a documentation address is routed by the main table's default route, not table 100's local one", () => {
    const main = podNetwork({ v4: '10.1.0.2/24', default4: '10.1.0.1', v6: 'fd00::2/64', default6: 'fd00::1' });
    // rtnetlink lists table 100 before main (254): the order the kernel dumped in the pod.
    const network = { ...main, routes: [table100('0.0.0.0/0'), table100('::/0'), ...main.routes] };
    expect(routability(network, parseIp('192.0.2.7')!)).toMatchObject({ routed: true, linkName: 'eth0' });
    expect(routability(network, parseIp('2001:db8::7')!)).toMatchObject({ routed: true, linkName: 'eth0' });
  });

  it('with no main-table route, another table still answers (nothing is invented)', () => {
    const network = podNetwork({ v4: '10.1.0.2/24', extraRoutes: [table100('0.0.0.0/0')] });
    expect(routability(network, parseIp('192.0.2.7')!)).toMatchObject({ routed: false });
  });
});
