import { parseIp, type IpAddress } from '../../src/addr/ip.js';
import type { Packet } from '../../src/trace/packet.js';

/** The packets the tracer tests start from: one outbound from the pod, one inbound to it. */
export const ip = (text: string): IpAddress => parseIp(text) as IpAddress;

export const outboundPacket = (over: Partial<Packet> = {}): Packet => ({
  family: 'ipv4',
  hook: 'output',
  protocol: 'tcp',
  source: ip('10.0.0.2'),
  destination: ip('192.0.2.10'),
  sourcePort: 40000,
  destinationPort: 80,
  uid: 1000,
  gid: 1000,
  outInterface: 'eth0',
  ...over,
});

export const inboundPacket = (over: Partial<Packet> = {}): Packet => ({
  family: 'ipv4',
  hook: 'prerouting',
  protocol: 'tcp',
  source: ip('198.51.100.7'),
  destination: ip('10.0.0.2'),
  sourcePort: 40000,
  destinationPort: 8080,
  inInterface: 'eth0',
  ...over,
});
