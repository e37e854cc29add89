import { RtNetlinkSocket } from 'netlink/dist/rt/rt.js';
import { MessageType } from 'netlink/dist/rt/gen_structs.js';
import {
  formatAddressMessage,
  formatLinkMessage,
  formatRouteMessage,
  formatRuleMessage,
  type AddressMessage,
  type LinkMessage,
  type Message,
  type RouteMessage,
  type RuleMessage,
} from 'netlink/dist/rt/structs.js';
import { AttrStream } from 'netlink/dist/structs.js';
import type { RtNetlinkModule } from '../netlink/read-pod-network.js';

type NetlinkSocket = ConstructorParameters<typeof RtNetlinkSocket>[0];

/**
 * rtnetlink as netlink's own message parser sees it, without a socket: a pod with lo and eth0
 * (10.244.0.2/24, default route via 10.244.0.1, the default ip rules), in the kernel's wire format, written by the
 * library's formatters. The snapshot rehearsal reads it through readPodNetwork, so that the
 * parsers of link, address, route and rule messages are compiled into the blob; no addon is opened
 * (a snapshot cannot hold one) and nothing is sent to any kernel.
 */
export function cannedRtNetlink(): RtNetlinkModule {
  const replies = cannedReplies();
  const socket = {
    on: () => socket,
    request: (type: number) => Promise.resolve([replies.get(type) ?? [], { port: 0, groups: 0 }]),
    close: () => undefined,
  };
  return { createRtNetlink: () => new RtNetlinkSocket(socket as unknown as NetlinkSocket) };
}

// nlmsghdr: length, type, flags, sequence, port; NLM_F_MULTI; NLMSG_DONE.
const HEADER_BYTES = 16;
const MULTI = 2;
const DONE = 3;

/**
 * The netlink addon's native socket as the snapshot rehearsal's stand-in for the kernel: each
 * request is answered, a turn of the event loop later, with the canned dump for its type as one
 * multipart datagram ended by NLMSG_DONE, carrying the request's sequence number. With it, the
 * library's own socket layers (RawNetlinkSocket, NetlinkSocket: send, receive, reassembly) run
 * in the rehearsal and are compiled into the blob; the real addon is opened only at run time.
 */
export function cannedKernelAddon(): Record<string, unknown> {
  const replies = cannedReplies();
  class NativeNetlink {
    private port = 0;
    constructor(
      _protocol: number,
      _messageBuffer: number,
      private readonly receive: (message: Buffer, info: object) => void,
    ) {}
    bind(port: number): void {
      this.port = port;
    }
    address(): { port: number; groups: number } {
      return { port: this.port, groups: 0 };
    }
    send(_port: number, _groups: number, request: Buffer | readonly Buffer[], sent: (error?: Error) => void): void {
      // The library hands the addon either one buffer or the parts of one message.
      const bytes = Buffer.isBuffer(request) ? request : Buffer.concat(request);
      const [type, sequence] = [bytes.readUInt16LE(4), bytes.readUInt32LE(8)];
      const parts = [...(replies.get(type) ?? []), { type: DONE, data: Buffer.alloc(4) }];
      const datagram = Buffer.concat(parts.map((part) => frame(part.type, sequence, this.port, part.data)));
      setImmediate(() => {
        sent();
        this.receive(datagram, { port: 0, groups: 0, truncated: false });
      });
    }
    close(): void {}
    ref(): void {}
    unref(): void {}
  }
  return { NativeNetlink };
}

function frame(type: number, sequence: number, port: number, data: Buffer): Buffer {
  const padded = Buffer.alloc(HEADER_BYTES + Math.ceil(data.length / 4) * 4);
  padded.writeUInt32LE(HEADER_BYTES + data.length, 0);
  padded.writeUInt16LE(type, 4);
  padded.writeUInt16LE(MULTI, 6);
  padded.writeUInt32LE(sequence, 8);
  padded.writeUInt32LE(port, 12);
  data.copy(padded, HEADER_BYTES);
  return padded;
}

function cannedReplies(): Map<number, readonly { type: number; data: Buffer }[]> {
  return new Map<number, readonly { type: number; data: Buffer }[]>([
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
    [
      MessageType.GETRULE,
      // The kernel's three default IPv4 rules: local, main, default.
      [rule(255, undefined), rule(254, 32766), rule(253, 32767)].map((message) => wire(MessageType.NEWRULE, message)),
    ],
  ]);
}

function wire(type: number, message: Message): { type: number; data: Buffer } {
  const out = new AttrStream();
  if (message.kind === 'link') formatLinkMessage(message, out);
  else if (message.kind === 'address') formatAddressMessage(message, out);
  else if (message.kind === 'route') formatRouteMessage(message, out);
  else if (message.kind === 'rule') formatRuleMessage(message, out);
  return { type, data: Buffer.concat(out.bufs) };
}

function rule(table: number, priority: number | undefined): RuleMessage {
  return {
    kind: 'rule',
    data: { family: 2, table, action: 'toTbl' },
    attrs: { table, ...(priority === undefined ? {} : { priority }) },
  };
}

function link(index: number, name: string, loopback: boolean): LinkMessage {
  return {
    kind: 'link',
    data: { index, flags: loopback ? { up: true, running: true, loopback: true } : { up: true, running: true } },
    // The attributes a kernel sends for lo and a veth, so that their parsers are compiled too.
    attrs: {
      ifname: name,
      mtu: loopback ? 65536 : 1500,
      txqlen: loopback ? 1000 : 1000,
      operstate: loopback ? 0 : 6,
      linkmode: 0,
      minMtu: loopback ? 0 : 68,
      maxMtu: loopback ? 0 : 65535,
      group: 0,
      promiscuity: 0,
      numTxQueues: 1,
      numRxQueues: 1,
      carrier: 1,
      carrierChanges: 2,
      carrierUpCount: 1,
      carrierDownCount: 1,
      protoDown: Buffer.from([0]),
      gsoMaxSegs: 65535,
      gsoMaxSize: 65536,
      qdisc: 'noqueue',
      address: Buffer.alloc(6, loopback ? 0 : 2),
      broadcast: Buffer.alloc(6, loopback ? 0 : 0xff),
      map: Buffer.alloc(24),
      afSpec: new Map([[2, Buffer.alloc(4)]]),
      ...(loopback ? {} : { linkNetnsid: 0, link: Buffer.from([3, 0, 0, 0]), linkinfo: Buffer.alloc(8) }),
    },
  };
}

function address(index: number, bytes: readonly number[], prefixlen: number, scope: number): AddressMessage {
  const ip = Buffer.from(bytes);
  return {
    kind: 'address',
    data: { family: 2, prefixlen, scope, index, flags: { permanent: true } },
    attrs: {
      address: ip,
      local: ip,
      label: index === 1 ? 'lo' : 'eth0',
      flags: { permanent: true },
      cacheInfo: { ifaPrefered: 0xffffffff, ifaValid: 0xffffffff, cstamp: 100, tstamp: 100 },
    },
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
      ...(type === 'LOCAL' ? { prefsrc: Buffer.from(dst) } : { priority: 0, pref: Buffer.from([0]) }),
      cacheInfo: { clntref: 0, lastuse: 0, expires: 0, error: 0, used: 0, id: 0, ts: 0, tsage: 0 },
      ...(dst.length > 0 ? { dst: Buffer.from(dst) } : {}),
      ...(gateway ? { gateway: Buffer.from(gateway) } : {}),
    },
  };
}
