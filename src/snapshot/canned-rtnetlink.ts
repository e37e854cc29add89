import { RtNetlinkSocket } from 'netlink/dist/rt/rt.js';
import { MessageType } from 'netlink/dist/rt/gen_structs.js';
import {
  formatAddressMessage,
  formatLinkMessage,
  formatRouteMessage,
  type AddressMessage,
  type LinkMessage,
  type Message,
  type RouteMessage,
} from 'netlink/dist/rt/structs.js';
import { AttrStream } from 'netlink/dist/structs.js';
import type { RtNetlinkModule } from '../netlink/read-pod-network.js';

type NetlinkSocket = ConstructorParameters<typeof RtNetlinkSocket>[0];

/**
 * rtnetlink as netlink's own message parser sees it, without a socket: a pod with lo and eth0
 * (10.244.0.2/24, default route via 10.244.0.1), in the kernel's wire format, written by the
 * library's formatters. The snapshot rehearsal reads it through readPodNetwork, so that the
 * parsers of link, address and route messages are compiled into the blob; no addon is opened
 * (a snapshot cannot hold one) and nothing is sent to any kernel.
 */
export function cannedRtNetlink(): RtNetlinkModule {
  const replies = new Map<number, readonly { type: number; data: Buffer }[]>([
    [
      MessageType.GETLINK,
      [link(1, 'lo', true), link(2, 'eth0', false)].map((message) => wire(MessageType.NEWLINK, message)),
    ],
    [
      MessageType.GETADDR,
      [address(1, [127, 0, 0, 1], 8, 254), address(2, [10, 244, 0, 2], 24, 0)].map((message) =>
        wire(MessageType.NEWADDR, message),
      ),
    ],
    [
      MessageType.GETROUTE,
      [
        route(254, 'UNICAST', [], 0, [10, 244, 0, 1]),
        route(254, 'UNICAST', [10, 244, 0, 0], 24),
        route(255, 'LOCAL', [10, 244, 0, 2], 32),
      ].map((message) => wire(MessageType.NEWROUTE, message)),
    ],
  ]);
  const socket = {
    on: () => socket,
    request: (type: number) => Promise.resolve([replies.get(type) ?? [], { port: 0, groups: 0 }]),
    close: () => undefined,
  };
  return { createRtNetlink: () => new RtNetlinkSocket(socket as unknown as NetlinkSocket) };
}

function wire(type: number, message: Message): { type: number; data: Buffer } {
  const out = new AttrStream();
  if (message.kind === 'link') formatLinkMessage(message, out);
  else if (message.kind === 'address') formatAddressMessage(message, out);
  else if (message.kind === 'route') formatRouteMessage(message, out);
  return { type, data: Buffer.concat(out.bufs) };
}

function link(index: number, name: string, loopback: boolean): LinkMessage {
  return {
    kind: 'link',
    data: { index, flags: loopback ? { up: true, running: true, loopback: true } : { up: true, running: true } },
    attrs: { ifname: name, mtu: loopback ? 65536 : 1500 },
  };
}

function address(index: number, bytes: readonly number[], prefixlen: number, scope: number): AddressMessage {
  const ip = Buffer.from(bytes);
  return {
    kind: 'address',
    data: { family: 2, prefixlen, scope, index, flags: { permanent: true } },
    attrs: { address: ip, local: ip },
  };
}

function route(
  table: number,
  type: 'UNICAST' | 'LOCAL',
  dst: readonly number[],
  dstLen: number,
  gateway?: readonly number[],
): RouteMessage {
  return {
    kind: 'route',
    data: { family: 2, dstLen, table, type, scope: type === 'LOCAL' ? 'HOST' : 'UNIVERSE', protocol: 'KERNEL' },
    attrs: {
      table,
      oif: 2,
      ...(dst.length > 0 ? { dst: Buffer.from(dst) } : {}),
      ...(gateway ? { gateway: Buffer.from(gateway) } : {}),
    },
  };
}
