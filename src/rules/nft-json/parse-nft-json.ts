import { parseCidr, type Cidr } from '../../addr/cidr.js';
import { parseIp, type Family } from '../../addr/ip.js';
import type { PortRange } from '../../addr/port-set.js';
import {
  parseError,
  type Action,
  type Chain,
  type ChainType,
  type CtState,
  type Hook,
  type IdRange,
  type Match,
  type ParseResult,
  type Rule,
  type Table,
  type TableFamily,
} from '../model.js';

/**
 * Reads `nft -j list ruleset`. Native nftables (Istio's `inet istio-proxy-*` tables) and the
 * iptables-nft view of xtables tables both appear here; the latter carries `xt` expressions nft
 * cannot decode, which become unknown matches/targets so the tracer names them instead of guessing.
 * Tables of families other than ip/ip6/inet (arp, bridge, netdev) do not take part in IP NAT and
 * are skipped.
 */
export function parseNftJson(text: string, source: string): ParseResult {
  if (text.trim() === '') return { ok: true, tables: [] };
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: parseError(source, lineOfJsonError(text, message), `not JSON (${message}); give the output of "nft -j list ruleset"`) };
  }
  const list = isObject(document) ? document['nftables'] : undefined;
  if (!Array.isArray(list)) return { ok: false, error: parseError(source, 1, 'JSON without an "nftables" array: not "nft -j list ruleset" output') };

  const tables = new Map<string, { family: TableFamily; name: string; chains: Map<string, { chain: ChainDraft }> }>();
  const key = (family: unknown, table: unknown): string => `${String(family)}\u0000${String(table)}`;
  for (let index = 0; index < list.length; index++) {
    const item: unknown = list[index];
    const position = index + 1;
    if (!isObject(item)) return { ok: false, error: parseError(source, position, 'element of "nftables" is not an object') };
    if (isObject(item['table'])) {
      const table = item['table'];
      const family = tableFamily(table['family']);
      if (typeof table['name'] !== 'string') return { ok: false, error: parseError(source, position, 'table without a name') };
      if (family === undefined) continue;
      const id = key(table['family'], table['name']);
      if (tables.has(id)) return { ok: false, error: parseError(source, position, `table ${String(table['family'])} ${table['name']} appears twice`) };
      tables.set(id, { family, name: table['name'], chains: new Map() });
    } else if (isObject(item['chain'])) {
      const chain = item['chain'];
      if (tableFamily(chain['family']) === undefined) continue;
      const table = tables.get(key(chain['family'], chain['table']));
      if (!table || typeof chain['name'] !== 'string') return { ok: false, error: parseError(source, position, 'chain outside a known table or without a name') };
      const base = baseOf(chain);
      if (base === 'invalid') return { ok: false, error: parseError(source, position, `chain ${chain['name']} has a hook this reader does not understand`) };
      table.chains.set(chain['name'], { chain: { name: chain['name'], base, rules: [] } });
    } else if (isObject(item['rule'])) {
      const rule = item['rule'];
      if (tableFamily(rule['family']) === undefined) continue;
      const table = tables.get(key(rule['family'], rule['table']));
      const chain = typeof rule['chain'] === 'string' ? table?.chains.get(rule['chain']) : undefined;
      if (!table || !chain) return { ok: false, error: parseError(source, position, 'rule for a chain that was not listed before it') };
      const expressions = Array.isArray(rule['expr']) ? (rule['expr'] as unknown[]) : [];
      const parsed = parseExpressions(expressions, table.family);
      chain.chain.rules.push({
        matches: parsed.matches,
        actions: parsed.actions,
        provenance: {
          backend: 'nftables',
          family: table.family,
          table: table.name,
          chain: chain.chain.name,
          position: chain.chain.rules.length + 1,
          text: parsed.text,
          line: position,
        },
      });
    }
  }
  const result: Table[] = [];
  for (const table of tables.values()) {
    const chains = new Map<string, Chain>();
    for (const { chain } of table.chains.values()) chains.set(chain.name, chain);
    result.push({ backend: 'nftables', family: table.family, name: table.name, chains });
  }
  return { ok: true, tables: result };
}

interface ChainDraft {
  name: string;
  base: Chain['base'];
  rules: Rule[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lineOfJsonError(text: string, message: string): number {
  const match = /position (\d+)/.exec(message);
  if (!match) return 1;
  return text.slice(0, Number(match[1])).split('\n').length;
}

function tableFamily(value: unknown): TableFamily | undefined {
  if (value === 'ip') return 'ipv4';
  if (value === 'ip6') return 'ipv6';
  if (value === 'inet') return 'inet';
  return undefined;
}

const NAMED_PRIORITIES: Readonly<Record<string, number>> = { raw: -300, mangle: -150, dstnat: -100, filter: 0, security: 50, srcnat: 100 };
const HOOKS: readonly Hook[] = ['prerouting', 'input', 'forward', 'output', 'postrouting'];

function baseOf(chain: Record<string, unknown>): Chain['base'] | 'invalid' {
  if (chain['hook'] === undefined) return undefined;
  const hook = chain['hook'];
  if (typeof hook !== 'string') return 'invalid';
  if (!HOOKS.includes(hook as Hook)) return undefined;
  const prio = chain['prio'];
  const priority = typeof prio === 'number' ? prio : typeof prio === 'string' ? NAMED_PRIORITIES[prio] : undefined;
  const type = chain['type'];
  if (priority === undefined || (type !== 'nat' && type !== 'filter' && type !== 'route')) return 'invalid';
  const policy = chain['policy'] === 'drop' ? 'drop' : 'accept';
  return { hook: hook as Hook, priority, type: type as ChainType, policy };
}

function parseExpressions(expressions: readonly unknown[], family: TableFamily): { matches: Match[]; actions: Action[]; text: string } {
  const matches: Match[] = [];
  const actions: Action[] = [];
  const words: string[] = [];
  for (const expression of expressions) {
    if (!isObject(expression)) {
      matches.push({ kind: 'unknown', text: short(expression) });
      words.push(short(expression));
      continue;
    }
    const [name] = Object.keys(expression);
    const body = name === undefined ? undefined : expression[name];
    switch (name) {
      case 'match': {
        const parsed = isObject(body) ? parseMatch(body, family) : undefined;
        if (parsed) {
          matches.push(...parsed.matches);
          words.push(parsed.text);
        } else {
          matches.push({ kind: 'unknown', text: short(expression) });
          words.push(short(expression));
        }
        break;
      }
      case 'counter':
        words.push('counter');
        break;
      case 'log':
      case 'notrack':
        actions.push({ kind: 'continue', what: name });
        words.push(name);
        break;
      case 'accept':
      case 'drop':
      case 'return':
        actions.push({ kind: name });
        words.push(name);
        break;
      case 'reject':
        actions.push({ kind: 'drop' });
        words.push('reject');
        break;
      case 'jump':
      case 'goto': {
        const target = isObject(body) ? body['target'] : undefined;
        if (typeof target === 'string') {
          actions.push({ kind: name, chain: target });
          words.push(`${name} ${target}`);
        } else {
          actions.push({ kind: 'unknown', text: short(expression) });
          words.push(short(expression));
        }
        break;
      }
      case 'redirect': {
        const port = isObject(body) ? body['port'] : undefined;
        if (port === undefined || (typeof port === 'number' && isPort(port))) {
          actions.push({ kind: 'redirect', port });
          words.push(port === undefined ? 'redirect' : `redirect to :${port}`);
        } else {
          actions.push({ kind: 'unknown', text: short(expression) });
          words.push(short(expression));
        }
        break;
      }
      case 'tproxy': {
        const port = isObject(body) ? body['port'] : undefined;
        if (typeof port === 'number' && isPort(port)) {
          actions.push({ kind: 'tproxy', port, terminal: false });
          words.push(`tproxy to :${port}`);
        } else {
          actions.push({ kind: 'unknown', text: short(expression) });
          words.push(short(expression));
        }
        break;
      }
      case 'dnat': {
        const action = isObject(body) ? parseDnat(body) : undefined;
        actions.push(action ?? { kind: 'unknown', text: short(expression) });
        words.push(action ? `dnat to ${short(body)}` : short(expression));
        break;
      }
      case 'mangle': {
        const action = isObject(body) ? parseMangle(body) : undefined;
        actions.push(action ?? { kind: 'unknown', text: short(expression) });
        words.push(action ? renderMangle(action) : short(expression));
        break;
      }
      case 'xt': {
        const type = isObject(body) ? body['type'] : undefined;
        const xtName = isObject(body) ? String(body['name']) : '?';
        const text = `xt ${String(type)} ${xtName}`;
        if (type === 'match') matches.push({ kind: 'unknown', text });
        else actions.push({ kind: 'unknown', text });
        words.push(text);
        break;
      }
      default:
        actions.push({ kind: 'unknown', text: short(expression) });
        words.push(short(expression));
    }
  }
  if (actions.length === 0) actions.push({ kind: 'continue', what: 'no verdict' });
  return { matches, actions, text: words.join(' ') };
}

function short(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function isPort(value: number): boolean {
  return Number.isInteger(value) && value >= 1 && value <= 65535;
}

function parseDnat(body: Record<string, unknown>): Action | undefined {
  const address = typeof body['addr'] === 'string' ? parseIp(body['addr']) : undefined;
  if (body['addr'] !== undefined && !address) return undefined;
  const port = body['port'];
  if (port !== undefined && !(typeof port === 'number' && isPort(port))) return undefined;
  return { kind: 'dnat', address, port };
}

function parseMangle(body: Record<string, unknown>): Action | undefined {
  const key = body['key'];
  const value = body['value'];
  const keyName = selectorName(key);
  if (keyName === 'meta mark' && typeof value === 'number') return { kind: 'set-mark', value: value >>> 0, mask: 0xffffffff };
  if (keyName === 'meta mark' && selectorName(value) === 'ct mark') return { kind: 'restore-mark' };
  if (keyName === 'ct mark' && selectorName(value) === 'meta mark') return { kind: 'save-mark' };
  // Conntrack zones keep DNS flows apart; they never change where a packet is delivered.
  if (keyName === 'ct zone') return { kind: 'continue', what: 'ct zone set' };
  return undefined;
}

function renderMangle(action: Action): string {
  switch (action.kind) {
    case 'set-mark':
      return `meta mark set 0x${action.value.toString(16)}`;
    case 'restore-mark':
      return 'meta mark set ct mark';
    case 'save-mark':
      return 'ct mark set mark';
    default:
      return 'ct zone set';
  }
}

function selectorName(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  if (isObject(value['meta']) && typeof value['meta']['key'] === 'string') return `meta ${value['meta']['key']}`;
  if (isObject(value['ct']) && typeof value['ct']['key'] === 'string') return `ct ${value['ct']['key']}`;
  if (isObject(value['payload'])) return `${String(value['payload']['protocol'])} ${String(value['payload']['field'])}`;
  return undefined;
}

type ParsedMatch = { matches: Match[]; text: string } | undefined;

function parseMatch(body: Record<string, unknown>, family: TableFamily): ParsedMatch {
  const op = body['op'];
  let negated: boolean;
  if (op === '==' || op === 'in' || op === 'eq') negated = false;
  else if (op === '!=' || op === 'ne') negated = true;
  else return undefined;
  const left = body['left'];
  const right = body['right'];
  const opText = negated ? '!= ' : '';
  const text = (name: string): string => `${name} ${opText}${renderValue(right)}`;

  // `meta mark & 0xff == 0x1`: a masked mark test.
  if (isObject(left) && Array.isArray(left['&'])) {
    const [inner, mask] = left['&'] as unknown[];
    const name = selectorName(inner);
    if ((name === 'meta mark' || name === 'ct mark') && typeof mask === 'number' && typeof right === 'number') {
      return { matches: [{ kind: 'mark', field: name === 'meta mark' ? 'mark' : 'ctmark', value: right >>> 0, mask: mask >>> 0, negated }], text: `${name} & 0x${mask.toString(16)} ${opText}0x${right.toString(16)}` };
    }
    return undefined;
  }
  const name = selectorName(left);
  switch (name) {
    case 'meta l4proto':
    case 'meta protocol':
    case 'ip protocol':
    case 'ip6 nexthdr': {
      if (name === 'meta protocol') return undefined;
      const protocols = stringsOf(right)?.map(protocolName);
      return protocols ? { matches: [{ kind: 'protocol', protocols, negated }], text: text(name) } : undefined;
    }
    case 'meta nfproto': {
      const values = stringsOf(right);
      if (!values || values.length !== 1 || negated) return undefined;
      const l3 = values[0] === 'ipv4' ? 'ipv4' : values[0] === 'ipv6' ? 'ipv6' : undefined;
      return l3 ? { matches: [{ kind: 'l3', family: l3 }], text: text(name) } : undefined;
    }
    case 'meta iifname':
    case 'meta oifname': {
      const names = stringsOf(right);
      if (!names) return undefined;
      return { matches: [{ kind: 'interface', field: name === 'meta iifname' ? 'iif' : 'oif', names, negated }], text: text(name.slice(5)) };
    }
    case 'meta skuid':
    case 'meta skgid': {
      const ids = idRangesOf(right);
      if (!ids) return undefined;
      return { matches: [{ kind: 'owner', field: name === 'meta skuid' ? 'uid' : 'gid', ids, negated }], text: text(name) };
    }
    case 'meta mark':
    case 'ct mark': {
      if (typeof right !== 'number') return undefined;
      return { matches: [{ kind: 'mark', field: name === 'meta mark' ? 'mark' : 'ctmark', value: right >>> 0, mask: 0xffffffff, negated }], text: `${name} ${opText}0x${right.toString(16)}` };
    }
    case 'ct state': {
      const states = stringsOf(right);
      if (!states || !states.every((state) => ['new', 'established', 'related', 'invalid', 'untracked'].includes(state))) return undefined;
      return { matches: [{ kind: 'ctstate', states: states as CtState[], negated }], text: text(name) };
    }
    case 'ip saddr':
    case 'ip daddr':
    case 'ip6 saddr':
    case 'ip6 daddr': {
      const addressFamily: Family = name.startsWith('ip6') ? 'ipv6' : 'ipv4';
      if (family !== 'inet' && family !== addressFamily) return undefined;
      const cidrs = cidrsOf(right, addressFamily);
      if (!cidrs) return undefined;
      return { matches: [{ kind: 'address', field: name.endsWith('saddr') ? 'saddr' : 'daddr', family: addressFamily, cidrs, negated }], text: text(name) };
    }
    case 'tcp dport':
    case 'tcp sport':
    case 'udp dport':
    case 'udp sport':
    case 'th dport':
    case 'th sport': {
      const ranges = portRangesOf(right);
      if (!ranges) return undefined;
      const [protocol = ''] = name.split(' ');
      // `tcp dport` carries nft's implicit `meta l4proto tcp` dependency.
      const dependency: Match[] = protocol === 'th' ? [{ kind: 'protocol', protocols: ['tcp', 'udp', 'sctp', 'udplite'], negated: false }] : [{ kind: 'protocol', protocols: [protocol], negated: false }];
      return { matches: [...dependency, { kind: 'port', field: name.endsWith('dport') ? 'dport' : 'sport', ports: { kind: 'ranges', ranges }, negated }], text: text(name) };
    }
    default:
      return undefined;
  }
}

function protocolName(value: string): string {
  const names: Readonly<Record<string, string>> = { '6': 'tcp', '17': 'udp', '1': 'icmp', '58': 'ipv6-icmp' };
  return names[value] ?? value;
}

function setElements(right: unknown): unknown[] {
  if (isObject(right) && Array.isArray(right['set'])) return right['set'] as unknown[];
  if (Array.isArray(right)) return right;
  return [right];
}

function stringsOf(right: unknown): string[] | undefined {
  const values: string[] = [];
  for (const element of setElements(right)) {
    if (typeof element === 'string') values.push(element);
    else if (typeof element === 'number') values.push(String(element));
    else return undefined;
  }
  return values.length > 0 ? values : undefined;
}

function rangeOf(element: unknown): [number, number] | undefined {
  if (typeof element === 'number') return [element, element];
  if (isObject(element) && Array.isArray(element['range'])) {
    const [from, to] = element['range'] as unknown[];
    if (typeof from === 'number' && typeof to === 'number' && from <= to) return [from, to];
  }
  return undefined;
}

function portRangesOf(right: unknown): PortRange[] | undefined {
  const ranges: PortRange[] = [];
  for (const element of setElements(right)) {
    const range = rangeOf(element);
    if (!range || !Number.isInteger(range[0]) || !Number.isInteger(range[1]) || range[0] < 0 || range[1] > 65535) return undefined;
    ranges.push({ from: range[0], to: range[1] });
  }
  return ranges.length > 0 ? ranges : undefined;
}

function idRangesOf(right: unknown): IdRange[] | undefined {
  const ranges: IdRange[] = [];
  for (const element of setElements(right)) {
    const range = rangeOf(element);
    if (!range || !Number.isInteger(range[0]) || !Number.isInteger(range[1]) || range[0] < 0 || range[1] > 0xffffffff) return undefined;
    ranges.push({ from: range[0], to: range[1] });
  }
  return ranges.length > 0 ? ranges : undefined;
}

function cidrsOf(right: unknown, family: Family): Cidr[] | undefined {
  const cidrs: Cidr[] = [];
  for (const element of setElements(right)) {
    let cidr: Cidr | undefined;
    if (typeof element === 'string') cidr = parseCidr(element);
    else if (isObject(element) && isObject(element['prefix'])) {
      const prefix = element['prefix'];
      if (typeof prefix['addr'] === 'string' && typeof prefix['len'] === 'number') cidr = parseCidr(`${prefix['addr']}/${prefix['len']}`);
    }
    // Address ranges (`10.0.0.1-10.0.0.9`) are not written by either mesh; left unknown.
    if (!cidr || cidr.family !== family) return undefined;
    cidrs.push(cidr);
  }
  return cidrs.length > 0 ? cidrs : undefined;
}

function renderValue(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (isObject(value) && Array.isArray(value['set'])) return `{ ${(value['set'] as unknown[]).map(renderValue).join(', ')} }`;
  if (Array.isArray(value)) return value.map(renderValue).join(',');
  if (isObject(value) && Array.isArray(value['range'])) return (value['range'] as unknown[]).map(renderValue).join('-');
  if (isObject(value) && isObject(value['prefix'])) return `${renderValue(value['prefix']['addr'])}/${renderValue(value['prefix']['len'])}`;
  return short(value);
}
