import { parseIp } from '../../addr/ip.js';
import type { Action, Match, TableFamily } from '../model.js';
import { isObject, isPort, selectorName, short } from './json-values.js';
import { parseMatch } from './match.js';

interface RuleTerms {
  readonly matches: Match[];
  readonly actions: Action[];
  readonly text: string;
}

/** What one expression contributes: matches or an action, and how it reads. */
interface Term {
  readonly matches?: readonly Match[];
  readonly action?: Action;
  readonly text: string;
}

type ExpressionReader = (body: unknown, name: string, family: TableFamily) => Term | undefined;

/** A rule's `expr` list as matches and actions; what cannot be modelled becomes an unknown term. */
export function parseExpressions(expressions: readonly unknown[], family: TableFamily): RuleTerms {
  const matches: Match[] = [];
  const actions: Action[] = [];
  const words: string[] = [];
  for (const expression of expressions) {
    const term = readExpression(expression, family);
    if (term.matches) matches.push(...term.matches);
    if (term.action) actions.push(term.action);
    words.push(term.text);
  }
  if (actions.length === 0) actions.push({ kind: 'continue', what: 'no verdict' });
  return { matches, actions, text: words.join(' ') };
}

function readExpression(expression: unknown, family: TableFamily): Term {
  if (!isObject(expression))
    return { matches: [{ kind: 'unknown', text: short(expression) }], text: short(expression) };
  const [name] = Object.keys(expression);
  const reader = name !== undefined && Object.hasOwn(EXPRESSIONS, name) ? EXPRESSIONS[name] : undefined;
  const term = reader?.(expression[name as string], name as string, family);
  if (term) return term;
  const unknown = { kind: 'unknown', text: short(expression) } as const;
  return name === 'match' ? { matches: [unknown], text: unknown.text } : { action: unknown, text: unknown.text };
}

const verdict: ExpressionReader = (_body, name) => ({
  action: { kind: name as 'accept' | 'drop' | 'return' },
  text: name,
});
const sideEffect: ExpressionReader = (_body, name) => ({ action: { kind: 'continue', what: name }, text: name });

const EXPRESSIONS: Readonly<Record<string, ExpressionReader>> = {
  match: (body, _name, family) => (isObject(body) ? parseMatch(body, family) : undefined),
  counter: () => ({ text: 'counter' }),
  log: sideEffect,
  notrack: () => ({ action: { kind: 'notrack' }, text: 'notrack' }),
  accept: verdict,
  drop: verdict,
  return: verdict,
  reject: () => ({ action: { kind: 'drop' }, text: 'reject' }),
  jump: chainTarget,
  goto: chainTarget,
  redirect: (body) => {
    const port = isObject(body) ? body['port'] : undefined;
    if (port !== undefined && !isPort(port)) return undefined;
    return { action: { kind: 'redirect', port }, text: port === undefined ? 'redirect' : `redirect to :${port}` };
  },
  tproxy: (body) => {
    const port = isObject(body) ? body['port'] : undefined;
    return isPort(port) ? { action: { kind: 'tproxy', port, terminal: false }, text: `tproxy to :${port}` } : undefined;
  },
  dnat: (body) => {
    const action = isObject(body) ? dnatAction(body) : undefined;
    return action ? { action, text: `dnat to ${short(body)}` } : undefined;
  },
  mangle: (body) => (isObject(body) ? mangleTerm(body) : undefined),
  xt: (body) => {
    const text = `xt ${String(isObject(body) ? body['type'] : undefined)} ${isObject(body) ? String(body['name']) : '?'}`;
    return isObject(body) && body['type'] === 'match'
      ? { matches: [{ kind: 'unknown', text }], text }
      : { action: { kind: 'unknown', text }, text };
  },
};

function chainTarget(body: unknown, name: string): Term | undefined {
  const target = isObject(body) ? body['target'] : undefined;
  if (typeof target !== 'string') return undefined;
  return { action: { kind: name as 'jump' | 'goto', chain: target }, text: `${name} ${target}` };
}

function dnatAction(body: Record<string, unknown>): Action | undefined {
  const address = typeof body['addr'] === 'string' ? parseIp(body['addr']) : undefined;
  if (body['addr'] !== undefined && !address) return undefined;
  const port = body['port'];
  if (port !== undefined && !isPort(port)) return undefined;
  return { kind: 'dnat', address, port };
}

/** `meta mark set`, `ct mark set`, `ct zone set`: the mark statements the meshes write. */
function mangleTerm(body: Record<string, unknown>): Term | undefined {
  const key = selectorName(body['key']);
  const value = body['value'];
  if (key === 'meta mark' && typeof value === 'number')
    return {
      action: { kind: 'set-mark', value: value >>> 0, mask: 0xffffffff },
      text: `meta mark set 0x${(value >>> 0).toString(16)}`,
    };
  if (key === 'meta mark' && selectorName(value) === 'ct mark')
    return { action: { kind: 'restore-mark' }, text: 'meta mark set ct mark' };
  if (key === 'ct mark' && selectorName(value) === 'meta mark')
    return { action: { kind: 'save-mark' }, text: 'ct mark set mark' };
  // Conntrack zones keep DNS flows apart; they never change where a packet is delivered.
  if (key === 'ct zone') return { action: { kind: 'continue', what: 'ct zone set' }, text: 'ct zone set' };
  return undefined;
}
