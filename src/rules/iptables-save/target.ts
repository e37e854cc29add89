import { parseIp, type Family, type IpAddress } from '../../addr/ip.js';
import type { Action } from '../model.js';
import { builtinChain } from './builtin-chains.js';
import type { TableDraft } from './chain-declaration.js';
import { parseMarkValue } from './module-options.js';

/** A target's options: `--name value` pairs and bare `--flag`s. */
interface TargetOptions {
  readonly values: ReadonlyMap<string, string>;
  readonly flags: ReadonlySet<string>;
  readonly rest: readonly string[];
}

// Actions are immutable: the verdicts without options are shared by every rule that has them.
const ACCEPT: Action = { kind: 'accept' };
const DROP: Action = { kind: 'drop' };
const RETURN: Action = { kind: 'return' };
const NOTRACK: Action = { kind: 'notrack' };
const NO_OPTIONS: TargetOptions = { values: new Map(), flags: new Set(), rest: [] };

type TargetReader = (options: TargetOptions, family: Family) => Action | undefined;

/** `-j TARGET [options]`: what the target does, or an unknown action naming it. */
export function parseTarget(
  target: string,
  words: readonly string[],
  start: number,
  table: TableDraft,
  family: Family,
): Action {
  // No target options (the common case): decided without copying or reading options.
  if (start === words.length) {
    if (target === 'RETURN') return RETURN;
    if (target === 'ACCEPT') return ACCEPT;
    if (target === 'DROP') return DROP;
  }
  const rest = words.slice(start);
  const reader = Object.hasOwn(TARGETS, target) ? TARGETS[target] : undefined;
  if (reader)
    return reader(rest.length === 0 ? NO_OPTIONS : targetOptions(rest), family) ?? unknownTarget(target, rest);
  if (rest.length === 0 && table.chains.has(target) && !builtinChain(table.name, target))
    return { kind: 'jump', chain: target };
  return unknownTarget(target, rest);
}

const TARGETS: Readonly<Record<string, TargetReader>> = {
  ACCEPT: (options) => (options.rest.length === 0 ? ACCEPT : undefined),
  DROP: (options) => (options.rest.length === 0 ? DROP : undefined),
  RETURN: (options) => (options.rest.length === 0 ? RETURN : undefined),
  REJECT: () => DROP,
  REDIRECT: redirectTarget,
  DNAT: (options, family) => {
    const destination = options.values.get('--to-destination');
    if (!only(options, '--to-destination', '--random', '--persistent') || destination === undefined) return undefined;
    return parseNatDestination(destination, family);
  },
  TPROXY: (options) => {
    const port = parseSinglePort(options.values.get('--on-port') ?? '');
    return only(options, '--on-port', '--on-ip', '--tproxy-mark') && port !== undefined
      ? { kind: 'tproxy', port, terminal: true }
      : undefined;
  },
  MARK: (options) => {
    const xmark = options.values.get('--set-xmark') ?? options.values.get('--set-mark');
    const mark =
      options.values.size === 1 && options.flags.size === 0 && xmark !== undefined ? parseMarkValue(xmark) : undefined;
    return mark ? { kind: 'set-mark', ...mark } : undefined;
  },
  CONNMARK: connmarkTarget,
  CT: ctTarget,
  NOTRACK: (options) => (options.rest.length === 0 ? NOTRACK : undefined),
  LOG: () => ({ kind: 'continue', what: 'LOG' }),
  NFLOG: () => ({ kind: 'continue', what: 'NFLOG' }),
  TRACE: () => ({ kind: 'continue', what: 'TRACE' }),
};

function targetOptions(rest: readonly string[]): TargetOptions {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let index = 0; index < rest.length; index++) {
    const word = rest[index] as string;
    const next = rest[index + 1];
    if (next !== undefined && !next.startsWith('--')) {
      values.set(word, next);
      index++;
    } else {
      flags.add(word);
    }
  }
  return { values, flags, rest };
}

function only(options: TargetOptions, ...allowed: string[]): boolean {
  return [...options.values.keys(), ...options.flags].every((key) => allowed.includes(key));
}

function redirectTarget(options: TargetOptions): Action | undefined {
  if (!only(options, '--to-ports', '--random')) return undefined;
  const ports = options.values.get('--to-ports');
  if (ports === undefined) return { kind: 'redirect', port: undefined };
  const port = parseSinglePort(ports);
  return port === undefined ? undefined : { kind: 'redirect', port };
}

function connmarkTarget(options: TargetOptions): Action | undefined {
  const fullMasks = ['--nfmask', '--ctmask', '--mask'].every(
    (key) => !options.values.has(key) || options.values.get(key) === '0xffffffff',
  );
  if (!fullMasks || options.flags.size !== 1) return undefined;
  if (options.flags.has('--save-mark')) return { kind: 'save-mark' };
  if (options.flags.has('--restore-mark')) return { kind: 'restore-mark' };
  return undefined;
}

/** CT options a kernel run shows leave NAT alone (test/kernel/semantics.root.test.ts); each takes a value. */
const HARMLESS_CT_OPTIONS: readonly string[] = ['--zone', '--helper', '--ctevents'];

/** `-j CT --notrack` untracks; zones, helpers and event masks change nothing NAT does; the rest is unknown. */
function ctTarget(options: TargetOptions): Action | undefined {
  if (options.rest.length === 1 && options.flags.has('--notrack')) return NOTRACK;
  if (options.flags.size > 0 || options.values.size === 0) return undefined;
  if (![...options.values.keys()].every((key) => HARMLESS_CT_OPTIONS.includes(key))) return undefined;
  return { kind: 'continue', what: `CT ${options.rest.join(' ')}` };
}

function unknownTarget(target: string, rest: readonly string[]): Action {
  return { kind: 'unknown', text: `-j ${[target, ...rest].join(' ')}` };
}

function parseSinglePort(text: string): number | undefined {
  const match = /^(\d{1,5})(?:[-:](\d{1,5}))?$/.exec(text);
  if (!match) return undefined;
  const from = Number(match[1]);
  const to = match[2] === undefined ? from : Number(match[2]);
  // A range spreads connections over ports; one port is all the meshes write and all we can check.
  return from === to && from >= 1 && from <= 65535 ? from : undefined;
}

/** `--to-destination [ADDR][:PORT]`, with IPv6 addresses in brackets. */
function parseNatDestination(text: string, family: Family): Action | undefined {
  const bracket = /^\[([^\]]+)\](?::(.+))?$/.exec(text);
  const [addressText, portText] = bracket
    ? [bracket[1] as string, bracket[2]]
    : family === 'ipv4' && text.includes(':')
      ? [text.slice(0, text.indexOf(':')), text.split(':')[1]]
      : // ip6tables prints a port alone as `:PORT` but an address without a port bare, `::1` too.
        text.startsWith(':') && !parseIp(text)
        ? ['', text.slice(1)]
        : [text, undefined];
  let address: IpAddress | undefined;
  if (addressText !== '') {
    address = parseIp(addressText);
    if (!address || address.family !== family) return undefined;
  }
  const port = portText === undefined ? undefined : parseSinglePort(portText);
  if (portText !== undefined && port === undefined) return undefined;
  return { kind: 'dnat', address, port };
}
