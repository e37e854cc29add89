import type { Family } from '../../addr/ip.js';
import type { CtState, Match, TableFamily } from '../model.js';
import { cidrsOf, idRangesOf, isObject, portRangesOf, renderValue, selectorName, stringsOf } from './json-values.js';

interface ParsedMatch {
  readonly matches: readonly Match[];
  readonly text: string;
}

/** One `match` expression's parts, with the operator read. */
interface Comparison {
  readonly name: string;
  readonly right: unknown;
  readonly negated: boolean;
  readonly family: TableFamily;
}

type SelectorReader = (comparison: Comparison) => Match[] | undefined;

/** A `match` expression as the model's matches, or undefined when the engine cannot model it. */
export function parseMatch(body: Record<string, unknown>, family: TableFamily): ParsedMatch | undefined {
  const op = body['op'];
  // nft's JSON knows no "eq" or "ne" (its parser refuses them): only the symbols it prints.
  const negated = op === '!=';
  if (!negated && op !== '==' && op !== 'in') return undefined;
  const left = body['left'];
  const right = body['right'];
  if (isObject(left) && Array.isArray(left['&'])) return maskedMark(left['&'] as unknown[], right, negated);
  const name = selectorName(left);
  const reader = name !== undefined && Object.hasOwn(SELECTORS, name) ? SELECTORS[name] : undefined;
  const matches = reader?.({ name: name as string, right, negated, family });
  if (!matches) return undefined;
  const opText = negated ? '!= ' : '';
  const shown = name?.startsWith('meta ') && name.endsWith('ifname') ? name.slice(5) : name;
  const value =
    typeof right === 'number' && (name === 'meta mark' || name === 'ct mark')
      ? `0x${right.toString(16)}`
      : renderValue(right);
  return { matches, text: `${shown as string} ${opText}${value}` };
}

/** `meta mark & 0xff == 0x1`: a masked mark test. */
function maskedMark(operands: readonly unknown[], right: unknown, negated: boolean): ParsedMatch | undefined {
  const [inner, mask] = operands;
  const name = selectorName(inner);
  if ((name !== 'meta mark' && name !== 'ct mark') || typeof mask !== 'number' || typeof right !== 'number')
    return undefined;
  const match: Match = {
    kind: 'mark',
    field: name === 'meta mark' ? 'mark' : 'ctmark',
    value: right >>> 0,
    mask: mask >>> 0,
    negated,
  };
  return { matches: [match], text: `${name} & 0x${mask.toString(16)} ${negated ? '!= ' : ''}0x${right.toString(16)}` };
}

const PROTOCOL_NAMES: Readonly<Record<string, string>> = { '6': 'tcp', '17': 'udp', '1': 'icmp', '58': 'ipv6-icmp' };
const CT_STATES: readonly string[] = ['new', 'established', 'related', 'invalid', 'untracked'];

function protocols({ right, negated }: Comparison): Match[] | undefined {
  const names = stringsOf(right)?.map((value) => PROTOCOL_NAMES[value] ?? value);
  return names ? [{ kind: 'protocol', protocols: names, negated }] : undefined;
}

function l3({ right, negated }: Comparison): Match[] | undefined {
  const values = stringsOf(right);
  if (!values || values.length !== 1 || negated) return undefined;
  const family = values[0] === 'ipv4' ? 'ipv4' : values[0] === 'ipv6' ? 'ipv6' : undefined;
  return family ? [{ kind: 'l3', family }] : undefined;
}

function interfaces({ name, right, negated }: Comparison): Match[] | undefined {
  const names = stringsOf(right);
  return names ? [{ kind: 'interface', field: name === 'meta iifname' ? 'iif' : 'oif', names, negated }] : undefined;
}

function owners({ name, right, negated }: Comparison): Match[] | undefined {
  const ids = idRangesOf(right);
  return ids ? [{ kind: 'owner', field: name === 'meta skuid' ? 'uid' : 'gid', ids, negated }] : undefined;
}

function mark({ name, right, negated }: Comparison): Match[] | undefined {
  if (typeof right !== 'number') return undefined;
  return [
    { kind: 'mark', field: name === 'meta mark' ? 'mark' : 'ctmark', value: right >>> 0, mask: 0xffffffff, negated },
  ];
}

function ctState({ right, negated }: Comparison): Match[] | undefined {
  const states = stringsOf(right);
  if (!states || !states.every((state) => CT_STATES.includes(state))) return undefined;
  return [{ kind: 'ctstate', states: states as CtState[], negated }];
}

function address({ name, right, negated, family }: Comparison): Match[] | undefined {
  const addressFamily: Family = name.startsWith('ip6') ? 'ipv6' : 'ipv4';
  if (family !== 'inet' && family !== addressFamily) return undefined;
  const cidrs = cidrsOf(right, addressFamily);
  return cidrs
    ? [{ kind: 'address', field: name.endsWith('saddr') ? 'saddr' : 'daddr', family: addressFamily, cidrs, negated }]
    : undefined;
}

function port({ name, right, negated }: Comparison): Match[] | undefined {
  const ranges = portRangesOf(right);
  if (!ranges) return undefined;
  const [protocol = ''] = name.split(' ');
  // `tcp dport` carries nft's implicit `meta l4proto tcp` dependency.
  const dependency: Match = {
    kind: 'protocol',
    protocols: protocol === 'th' ? ['tcp', 'udp', 'sctp', 'udplite'] : [protocol],
    negated: false,
  };
  return [
    dependency,
    { kind: 'port', field: name.endsWith('dport') ? 'dport' : 'sport', ports: { kind: 'ranges', ranges }, negated },
  ];
}

// `meta protocol` (the ethertype) is not modelled: it stays an unknown match.
const SELECTORS: Readonly<Record<string, SelectorReader>> = {
  'meta l4proto': protocols,
  'ip protocol': protocols,
  'ip6 nexthdr': protocols,
  'meta nfproto': l3,
  'meta iifname': interfaces,
  'meta oifname': interfaces,
  'meta skuid': owners,
  'meta skgid': owners,
  'meta mark': mark,
  'ct mark': mark,
  'ct state': ctState,
  'ip saddr': address,
  'ip daddr': address,
  'ip6 saddr': address,
  'ip6 daddr': address,
  'tcp dport': port,
  'tcp sport': port,
  'udp dport': port,
  'udp sport': port,
  'th dport': port,
  'th sport': port,
};
