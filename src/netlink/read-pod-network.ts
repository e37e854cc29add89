import type { createRtNetlink } from 'netlink/dist/rt/rt.js';
import { cidrOf } from '../addr/cidr.js';
import { FAMILY_BITS, ipFromBytes, type Family } from '../addr/ip.js';
import type {
  AddressInfo,
  AddressScope,
  LinkInfo,
  PodNetwork,
  PolicyRule,
  RouteInfo,
  RouteType,
} from '../network/pod-network.js';

const AF_INET = 2;
const AF_INET6 = 10;

/**
 * Reads links, addresses and routes of the network namespace this process is in. rtnetlink dumps
 * need no capability, so this works in an init container that dropped them all.
 */
export type RtNetlinkModule = { readonly createRtNetlink: typeof createRtNetlink };
export type LoadRtNetlink = () => Promise<RtNetlinkModule>;

/**
 * Loads only the rtnetlink entry of the package (its index also loads nl80211, genl and wireguard
 * tables), and only when asked: a start-up snapshot cannot hold the native addon it opens.
 */
const loadRtNetlink: LoadRtNetlink = () => import('netlink/dist/rt/rt.js');

export async function readPodNetwork(load: LoadRtNetlink = loadRtNetlink): Promise<PodNetwork> {
  const { createRtNetlink } = await load();
  const socket = createRtNetlink();
  try {
    // One dump at a time: concurrent dumps on one socket interleave their multipart replies.
    const links = await socket.getLinks();
    const addresses = await socket.getAddresses();
    const routes = await socket.getRoutes();
    const rules = await socket.getRules();
    return {
      links: links.map(toLink),
      addresses: addresses.flatMap(toAddress),
      routes: routes.flatMap(toRoute),
      rules: rules.flatMap(toRule),
    };
  } finally {
    socket.socket.close();
  }
}

type Links = Awaited<ReturnType<ReturnType<typeof createRtNetlink>['getLinks']>>;
type Addresses = Awaited<ReturnType<ReturnType<typeof createRtNetlink>['getAddresses']>>;
type Routes = Awaited<ReturnType<ReturnType<typeof createRtNetlink>['getRoutes']>>;
type Rules = Awaited<ReturnType<ReturnType<typeof createRtNetlink>['getRules']>>;

function toLink(message: Links[number]): LinkInfo {
  const flags = message.data.flags ?? {};
  return {
    index: message.data.index ?? 0,
    name: message.attrs.ifname ?? `if${message.data.index ?? '?'}`,
    up: Boolean(flags.up),
    loopback: Boolean(flags.loopback),
  };
}

function familyOf(code: number | undefined): Family | undefined {
  return code === AF_INET ? 'ipv4' : code === AF_INET6 ? 'ipv6' : undefined;
}

function scopeOf(code: number | undefined): AddressScope {
  switch (code) {
    case 0:
      return 'global';
    case 200:
      return 'site';
    case 253:
      return 'link';
    case 254:
      return 'host';
    default:
      return 'nowhere';
  }
}

function toAddress(message: Addresses[number]): AddressInfo[] {
  const family = familyOf(message.data.family);
  // IFA_LOCAL is the address itself on point-to-point links; IFA_ADDRESS is the peer there.
  const bytes = message.attrs.local ?? message.attrs.address;
  const address = bytes ? ipFromBytes(bytes) : undefined;
  if (!family || !address || address.family !== family) return [];
  const flags = { ...(message.data.flags ?? {}), ...(message.attrs.flags ?? {}) } as Record<
    string,
    boolean | undefined
  >;
  return [
    {
      linkIndex: message.data.index ?? 0,
      address,
      prefix: message.data.prefixlen ?? FAMILY_BITS[family],
      scope: scopeOf(message.data.scope),
      usable: !flags.tentative && !flags.dadfailed,
      tentative: Boolean(flags.tentative) && !flags.dadfailed,
    },
  ];
}

function toRoute(message: Routes[number]): RouteInfo[] {
  const family = familyOf(message.data.family);
  if (!family) return [];
  const dstBytes = message.attrs.dst;
  const dst = dstBytes ? ipFromBytes(dstBytes) : { family, value: 0n };
  if (!dst || dst.family !== family) return [];
  const gateway = message.attrs.gateway ? ipFromBytes(message.attrs.gateway) : undefined;
  return [
    {
      family,
      table: message.attrs.table ?? message.data.table ?? 0,
      type: routeTypeOf(message.data.type),
      destination: cidrOf(dst, message.data.dstLen ?? 0),
      gateway,
      outputLinkIndex: message.attrs.oif,
    },
  ];
}

function toRule(message: Rules[number]): PolicyRule[] {
  const family = familyOf(message.data.family);
  if (!family) return [];
  // The package decodes the action to its enum key ('toTbl'); a raw 1 (FR_ACT_TO_TBL) means the same.
  const action: unknown = message.data.action;
  return [
    {
      family,
      // The kernel always sends FRA_PRIORITY but for the rule of preference 0.
      priority: message.attrs.priority ?? 0,
      table: action === 'toTbl' || action === 1 ? (message.attrs.table ?? message.data.table) : undefined,
      fwmark: message.attrs.fwmark,
      fwmask: message.attrs.fwmask,
      invert: Boolean(message.data.flags?.invert),
    },
  ];
}

function routeTypeOf(type: unknown): RouteType {
  const known: readonly RouteType[] = [
    'unicast',
    'local',
    'broadcast',
    'anycast',
    'multicast',
    'blackhole',
    'unreachable',
    'prohibit',
    'throw',
  ];
  const lower = typeof type === 'string' ? type.toLowerCase() : '';
  return (known as readonly string[]).includes(lower) ? (lower as RouteType) : 'other';
}
