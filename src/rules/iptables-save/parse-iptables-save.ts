import { parseCidr, type Cidr } from '../../addr/cidr.js';
import { parseIp, type Family, type IpAddress } from '../../addr/ip.js';
import { parsePortSet } from '../../addr/port-set.js';
import {
  parseError,
  type Action,
  type Backend,
  type Chain,
  type CtState,
  type IdRange,
  type Match,
  type ParseResult,
  type Rule,
  type Table,
} from '../model.js';
import { builtinChain, isIptablesTable } from './builtin-chains.js';
import { tokenizeLine } from './tokenize.js';

interface ParseOptions {
  readonly backend: Exclude<Backend, 'nftables'>;
  readonly family: Family;
  /** Names the dump in errors (a file name or the command that printed it). */
  readonly source: string;
}

interface ChainDraft {
  name: string;
  policy: 'accept' | 'drop' | undefined;
  rules: Rule[];
}

interface TableDraft {
  name: string;
  chains: Map<string, ChainDraft>;
}

const MAX_LINE = 64 * 1024;

/**
 * Reads `iptables-save` / `ip6tables-save` output (both backends print the same syntax). Structure
 * that iptables-restore would refuse (a rule outside a table, an undeclared chain, a missing COMMIT)
 * is a parse error naming the line; a match or target this reader does not model becomes an
 * `unknown` element of the rule, so the tracer can name it instead of guessing.
 */
export function parseIptablesSave(text: string, options: ParseOptions): ParseResult {
  const tables: Table[] = [];
  const seen = new Set<string>();
  let table: TableDraft | undefined;
  let tableLine = 0;
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const lineNumber = index + 1;
    const raw = (lines[index] ?? '').replace(/\r$/, '');
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const fail = (message: string): ParseResult => ({ ok: false, error: parseError(options.source, lineNumber, message) });
    if (line.length > MAX_LINE) return fail('line is too long to be an iptables-save rule');
    if (line.startsWith('*')) {
      if (table) return fail(`table "${line.slice(1)}" starts before table "${table.name}" was committed`);
      const name = line.slice(1);
      if (!/^[a-z_]{1,32}$/.test(name)) return fail(`"${line}" does not name a table`);
      if (seen.has(name)) return fail(`table "${name}" appears twice`);
      seen.add(name);
      table = { name, chains: new Map() };
      tableLine = lineNumber;
      continue;
    }
    if (!table) return fail(`"${truncate(line)}" appears outside a table (expected *table first)`);
    if (line === 'COMMIT') {
      tables.push(finishTable(table, options));
      table = undefined;
      continue;
    }
    if (line.startsWith(':')) {
      const match = /^:(\S{1,64})\s+(\S+)(?:\s+\[\d+:\d+\])?$/.exec(line);
      if (!match) return fail(`"${truncate(line)}" is not a chain declaration`);
      const name = match[1] as string;
      const policyText = match[2] as string;
      const builtin = builtinChain(table.name, name);
      let policy: ChainDraft['policy'];
      if (policyText === 'ACCEPT') policy = 'accept';
      else if (policyText === 'DROP') policy = 'drop';
      else if (policyText !== '-') return fail(`chain ${name} has policy "${policyText}"`);
      if (builtin && policy === undefined) return fail(`built-in chain ${name} has no policy`);
      if (!builtin && policy !== undefined) return fail(`user chain ${name} cannot have a policy`);
      if (table.chains.has(name)) return fail(`chain ${name} is declared twice`);
      table.chains.set(name, { name, policy, rules: [] });
      continue;
    }
    const rule = parseRuleLine(line, lineNumber, table, options);
    if ('message' in rule) return fail(rule.message);
    rule.chain.rules.push(rule.rule);
  }
  if (table) {
    return { ok: false, error: parseError(options.source, tableLine, `table "${table.name}" has no COMMIT (truncated dump?)`) };
  }
  return { ok: true, tables };
}

function finishTable(draft: TableDraft, options: ParseOptions): Table {
  const chains = new Map<string, Chain>();
  for (const chain of draft.chains.values()) {
    const builtin = builtinChain(draft.name, chain.name);
    chains.set(chain.name, {
      name: chain.name,
      rules: chain.rules,
      ...(builtin && chain.policy ? { base: { ...builtin, policy: chain.policy } } : {}),
    });
  }
  return { backend: options.backend, family: options.family, name: draft.name, chains };
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

type RuleLine = { chain: ChainDraft; rule: Rule } | { message: string };

function parseRuleLine(line: string, lineNumber: number, table: TableDraft, options: ParseOptions): RuleLine {
  let words = tokenizeLine(line);
  if (!words) return { message: 'unterminated quote' };
  // `iptables-save -c` prints counters as a `[packets:bytes]` prefix.
  if (words[0] !== undefined && /^\[\d+:\d+\]$/.test(words[0])) words = words.slice(1);
  if (words[0] === '-I') return { message: 'iptables-save never prints -I; expected -A' };
  if (words[0] !== '-A') return { message: `"${truncate(line)}" is neither a rule (-A) nor a chain, table or COMMIT line` };
  const chainName = words[1];
  if (chainName === undefined) return { message: '-A without a chain name' };
  const chain = table.chains.get(chainName);
  if (!chain) return { message: `rule for chain ${chainName}, which table ${table.name} does not declare` };
  const text = words[0] === '-A' && line.startsWith('[') ? line.replace(/^\[\d+:\d+\]\s*/, '') : line;
  const body = parseRuleWords(words.slice(2), table, options.family);
  if ('message' in body) return body;
  return {
    chain,
    rule: {
      matches: body.matches,
      actions: body.actions,
      provenance: {
        backend: options.backend,
        family: options.family,
        table: table.name,
        chain: chainName,
        position: chain.rules.length + 1,
        text,
        line: lineNumber,
      },
    },
  };
}

const OPTION_ALIASES: Readonly<Record<string, string>> = {
  '--protocol': '-p',
  '--source': '-s',
  '--src': '-s',
  '--destination': '-d',
  '--dst': '-d',
  '--in-interface': '-i',
  '--out-interface': '-o',
  '--match': '-m',
  '--jump': '-j',
  '--goto': '-g',
  '--destination-port': '--dport',
  '--source-port': '--sport',
  '--destination-ports': '--dports',
  '--source-ports': '--sports',
};

function parseRuleWords(
  words: readonly string[],
  table: TableDraft,
  family: Family,
): { matches: Match[]; actions: Action[] } | { message: string } {
  const matches: Match[] = [];
  const actions: Action[] = [];
  let negate = false;
  let module = '';
  let index = 0;
  const takeValue = (): string | undefined => {
    const value = words[index];
    index++;
    return value;
  };
  while (index < words.length) {
    const word = words[index] as string;
    index++;
    if (word === '!') {
      negate = true;
      continue;
    }
    const option = OPTION_ALIASES[word] ?? word;
    const negated = negate;
    negate = false;
    switch (option) {
      case '-p': {
        const value = takeValue();
        if (value === undefined) return { message: '-p without a protocol' };
        matches.push(protocolMatch(value, negated));
        break;
      }
      case '-s':
      case '-d': {
        const value = takeValue();
        if (value === undefined) return { message: `${option} without an address` };
        matches.push(addressMatch(option === '-s' ? 'saddr' : 'daddr', value, family, negated));
        break;
      }
      case '-i':
      case '-o': {
        const value = takeValue();
        if (value === undefined) return { message: `${option} without an interface` };
        matches.push({ kind: 'interface', field: option === '-i' ? 'iif' : 'oif', names: [value], negated });
        break;
      }
      case '-m': {
        const value = takeValue();
        if (value === undefined) return { message: '-m without a module' };
        module = value;
        if (!KNOWN_MODULES.has(module)) {
          // Consume the module's options so they are named in the unknown match, not misread.
          const start = index;
          while (index < words.length && !isRuleLevelOption(words[index] as string, words[index + 1])) index++;
          matches.push({ kind: 'unknown', text: `-m ${module} ${words.slice(start, index).join(' ')}`.trim() });
        }
        break;
      }
      case '-c': {
        index += 2;
        break;
      }
      case '-j':
      case '-g': {
        const target = takeValue();
        if (target === undefined) return { message: `${option} without a target` };
        const rest = words.slice(index);
        index = words.length;
        if (option === '-g') {
          actions.push(table.chains.has(target) ? { kind: 'goto', chain: target } : { kind: 'unknown', text: `-g ${target}` });
        } else {
          actions.push(parseTarget(target, rest, table, family));
        }
        break;
      }
      default: {
        const consumed = parseModuleOption(module, option, words, index, negated, family);
        index = consumed.next;
        matches.push(consumed.match);
      }
    }
  }
  if (negate) return { message: 'dangling "!"' };
  if (actions.length === 0) actions.push({ kind: 'continue', what: 'no target' });
  return { matches, actions };
}

const KNOWN_MODULES = new Set(['tcp', 'udp', 'multiport', 'owner', 'comment', 'mark', 'connmark', 'conntrack', 'state']);

function isRuleLevelOption(word: string, next: string | undefined): boolean {
  if (word === '!' && next !== undefined) return isRuleLevelOption(next, undefined);
  return ['-p', '-s', '-d', '-i', '-o', '-m', '-j', '-g', '-c'].includes(OPTION_ALIASES[word] ?? word);
}

function protocolMatch(value: string, negated: boolean): Match {
  const names: Readonly<Record<string, string>> = { '6': 'tcp', '17': 'udp', '1': 'icmp', '58': 'ipv6-icmp', '132': 'sctp' };
  const name = names[value] ?? value.toLowerCase();
  if (name === 'all' || name === '0') return negated ? { kind: 'unknown', text: `! -p ${value}` } : { kind: 'protocol', protocols: ['tcp', 'udp', 'icmp', 'ipv6-icmp', 'sctp'], negated: false };
  return { kind: 'protocol', protocols: [name], negated };
}

function addressMatch(field: 'saddr' | 'daddr', value: string, family: Family, negated: boolean): Match {
  const cidrs: Cidr[] = [];
  for (const item of value.split(',')) {
    const cidr = parseMaskedCidr(item);
    if (!cidr || cidr.family !== family) {
      return { kind: 'unknown', text: `${negated ? '! ' : ''}${field === 'saddr' ? '-s' : '-d'} ${value}` };
    }
    cidrs.push(cidr);
  }
  return { kind: 'address', field, family, cidrs, negated };
}

/** iptables prints `/32`-style prefixes, but accepts and may print dotted netmasks too. */
function parseMaskedCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash > 0 && text.slice(slash + 1).includes('.')) {
    const mask = parseIp(text.slice(slash + 1));
    if (!mask || mask.family !== 'ipv4') return undefined;
    const bits = mask.value.toString(2).padStart(32, '0');
    if (!/^1*0*$/.test(bits)) return undefined;
    return parseCidr(`${text.slice(0, slash)}/${bits.indexOf('0') < 0 ? 32 : bits.indexOf('0')}`);
  }
  return parseCidr(text);
}

function parseModuleOption(
  module: string,
  option: string,
  words: readonly string[],
  index: number,
  negated: boolean,
  family: Family,
): { match: Match; next: number } {
  const value = words[index];
  const bang = negated ? '! ' : '';
  const unknown = (consumed: number): { match: Match; next: number } => ({
    match: { kind: 'unknown', text: `${module ? `-m ${module} ` : ''}${bang}${option}${consumed > 0 ? ` ${words.slice(index, index + consumed).join(' ')}` : ''}` },
    next: index + consumed,
  });
  const valueCount = (): number => {
    let count = 0;
    while (index + count < words.length && !(words[index + count] as string).startsWith('-') && words[index + count] !== '!') count++;
    return count;
  };
  if (value === undefined) return unknown(0);
  switch (`${module} ${option}`) {
    case 'tcp --dport':
    case 'udp --dport':
    case 'tcp --sport':
    case 'udp --sport':
    case 'multiport --dports':
    case 'multiport --sports': {
      const ports = parsePortSet(value);
      if (!ports.ok || ports.value.kind === 'all') return unknown(1);
      const field = option.startsWith('--d') ? 'dport' : 'sport';
      return { match: { kind: 'port', field, ports: ports.value, negated }, next: index + 1 };
    }
    case 'owner --uid-owner':
    case 'owner --gid-owner': {
      const ids = parseIdRange(value);
      if (!ids) return unknown(1);
      return { match: { kind: 'owner', field: option === '--uid-owner' ? 'uid' : 'gid', ids: [ids], negated }, next: index + 1 };
    }
    case 'comment --comment':
      return { match: { kind: 'comment', text: value }, next: index + 1 };
    case 'mark --mark':
    case 'connmark --mark': {
      const mark = parseMarkValue(value);
      if (!mark) return unknown(1);
      return { match: { kind: 'mark', field: module === 'mark' ? 'mark' : 'ctmark', ...mark, negated }, next: index + 1 };
    }
    case 'conntrack --ctstate':
    case 'state --state': {
      const states = parseCtStates(value);
      if (!states) return unknown(1);
      return { match: { kind: 'ctstate', states, negated }, next: index + 1 };
    }
    default:
      void family;
      return unknown(valueCount());
  }
}

function parseIdRange(text: string): IdRange | undefined {
  const match = /^(\d{1,10})(?:-(\d{1,10}))?$/.exec(text);
  if (!match) return undefined;
  const from = Number(match[1]);
  const to = match[2] === undefined ? from : Number(match[2]);
  return from <= to && to <= 0xffffffff ? { from, to } : undefined;
}

export function parseMarkValue(text: string): { value: number; mask: number } | undefined {
  const [valueText = '', maskText] = text.split('/');
  const value = parseUint32(valueText);
  const mask = maskText === undefined ? 0xffffffff : parseUint32(maskText);
  if (value === undefined || mask === undefined) return undefined;
  return { value, mask };
}

function parseUint32(text: string): number | undefined {
  if (!/^(0x[0-9a-fA-F]{1,8}|\d{1,10})$/.test(text)) return undefined;
  const value = Number(text);
  return value <= 0xffffffff ? value : undefined;
}

function parseCtStates(text: string): CtState[] | undefined {
  const states: CtState[] = [];
  for (const item of text.toLowerCase().split(',')) {
    if (!['new', 'established', 'related', 'invalid', 'untracked'].includes(item)) return undefined;
    states.push(item as CtState);
  }
  return states;
}

function parseTarget(target: string, rest: readonly string[], table: TableDraft, family: Family): Action {
  const options = new Map<string, string>();
  const flags = new Set<string>();
  for (let index = 0; index < rest.length; index++) {
    const word = rest[index] as string;
    const next = rest[index + 1];
    if (next !== undefined && !next.startsWith('--')) {
      options.set(word, next);
      index++;
    } else {
      flags.add(word);
    }
  }
  const unknown: Action = { kind: 'unknown', text: `-j ${[target, ...rest].join(' ')}` };
  const only = (...allowed: string[]): boolean =>
    [...options.keys(), ...flags].every((key) => allowed.includes(key));
  switch (target) {
    case 'ACCEPT':
      return rest.length === 0 ? { kind: 'accept' } : unknown;
    case 'DROP':
      return rest.length === 0 ? { kind: 'drop' } : unknown;
    case 'REJECT':
      return { kind: 'drop' };
    case 'RETURN':
      return rest.length === 0 ? { kind: 'return' } : unknown;
    case 'REDIRECT': {
      if (!only('--to-ports', '--random')) return unknown;
      const ports = options.get('--to-ports');
      if (ports === undefined) return { kind: 'redirect', port: undefined };
      const port = parseSinglePort(ports);
      return port === undefined ? unknown : { kind: 'redirect', port };
    }
    case 'DNAT': {
      if (!only('--to-destination', '--random', '--persistent')) return unknown;
      const destination = options.get('--to-destination');
      const parsed = destination === undefined ? undefined : parseNatDestination(destination, family);
      return parsed ?? unknown;
    }
    case 'TPROXY': {
      if (!only('--on-port', '--on-ip', '--tproxy-mark')) return unknown;
      const port = parseSinglePort(options.get('--on-port') ?? '');
      return port === undefined ? unknown : { kind: 'tproxy', port, terminal: true };
    }
    case 'MARK': {
      const xmark = options.get('--set-xmark') ?? options.get('--set-mark');
      if (options.size !== 1 || flags.size !== 0 || xmark === undefined) return unknown;
      const mark = parseMarkValue(xmark);
      return mark ? { kind: 'set-mark', ...mark } : unknown;
    }
    case 'CONNMARK': {
      const fullMasks = ['--nfmask', '--ctmask', '--mask'].every((key) => !options.has(key) || options.get(key) === '0xffffffff');
      if (!fullMasks) return unknown;
      if (flags.has('--save-mark') && flags.size === 1) return { kind: 'save-mark' };
      if (flags.has('--restore-mark') && flags.size === 1) return { kind: 'restore-mark' };
      return unknown;
    }
    case 'CT':
    case 'LOG':
    case 'NFLOG':
    case 'TRACE':
      return { kind: 'continue', what: target };
    default:
      if (rest.length === 0 && table.chains.has(target) && !builtinChain(table.name, target)) return { kind: 'jump', chain: target };
      void isIptablesTable;
      return unknown;
  }
}

function parseSinglePort(text: string): number | undefined {
  const match = /^(\d{1,5})(?:[-:](\d{1,5}))?$/.exec(text);
  if (!match) return undefined;
  const from = Number(match[1]);
  const to = match[2] === undefined ? from : Number(match[2]);
  // A range spreads connections over ports; one port is all the meshes write and all we can check.
  return from === to && from >= 1 && from <= 65535 ? from : undefined;
}

function parseNatDestination(text: string, family: Family): Action | undefined {
  let addressText = text;
  let portText: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(.+))?$/.exec(text);
  if (bracket) {
    addressText = bracket[1] as string;
    portText = bracket[2];
  } else if (family === 'ipv4' && text.includes(':')) {
    [addressText = '', portText] = text.split(':');
  } else if (text.startsWith(':')) {
    addressText = '';
    portText = text.slice(1);
  }
  let address: IpAddress | undefined;
  if (addressText !== '') {
    address = parseIp(addressText);
    if (!address || address.family !== family) return undefined;
  }
  let port: number | undefined;
  if (portText !== undefined) {
    port = parseSinglePort(portText);
    if (port === undefined) return undefined;
  }
  return { kind: 'dnat', address, port };
}
