import { isJsonObject } from './go-json.js';

/**
 * One plugin's configuration as libcni's `types.NetConf` struct holds it. Go's encoding/json
 * fills a struct field from any key that matches the field's JSON name case-insensitively
 * ("Type" fills `type`), later keys winning, and fails on a value of the wrong JSON type (a
 * JSON null leaves a field empty). Unknown keys are kept only in `raw`.
 */
export interface NetConf {
  readonly cniVersion: string;
  readonly name: string;
  readonly type: string;
  /** The IPAM plugin this plugin delegates to, when it names one. */
  readonly ipamType: string;
  readonly raw: Readonly<Record<string, unknown>>;
}

type FieldCheck = (value: unknown) => string | undefined;

const isString: FieldCheck = (value) =>
  value === null || typeof value === 'string' ? undefined : `a ${goKind(value)} where a string belongs`;
const isStringList: FieldCheck = (value) =>
  value === null || (Array.isArray(value) && value.every((item) => item === null || typeof item === 'string'))
    ? undefined
    : `a ${goKind(value)} where a list of strings belongs`;
const isObjectOf =
  (fields: Readonly<Record<string, FieldCheck>>): FieldCheck =>
  (value) => {
    if (value === null) return undefined;
    if (!isJsonObject(value)) return `a ${goKind(value)} where an object belongs`;
    for (const [key, item] of Object.entries(value)) {
      const check = fields[key.toLowerCase()];
      const problem = check?.(item);
      if (problem) return `${key}: ${problem}`;
    }
    return undefined;
  };
const isBoolMap: FieldCheck = (value) => {
  if (value === null) return undefined;
  if (!isJsonObject(value)) return `a ${goKind(value)} where an object of booleans belongs`;
  const wrong = Object.entries(value).find(([, item]) => item !== null && typeof item !== 'boolean');
  return wrong ? `${wrong[0]}: a ${goKind(wrong[1])} where a boolean belongs` : undefined;
};
const isAnyObject: FieldCheck = (value) =>
  value === null || isJsonObject(value) ? undefined : `a ${goKind(value)} where an object belongs`;

/** The struct's fields by folded JSON name, with the JSON type each accepts. */
const FIELDS: Readonly<Record<string, FieldCheck>> = {
  cniversion: isString,
  name: isString,
  type: isString,
  capabilities: isBoolMap,
  ipam: isObjectOf({ type: isString }),
  dns: isObjectOf({ nameservers: isStringList, domain: isString, search: isStringList, options: isStringList }),
  prevresult: isAnyObject,
};

/** Decodes one plugin configuration; the failure is libcni's reason in our words. */
export function decodeNetConf(value: unknown): { ok: true; conf: NetConf } | { ok: false; error: string } {
  if (value !== null && !isJsonObject(value))
    return { ok: false, error: `a ${goKind(value)} where a plugin object belongs` };
  const raw = value ?? {};
  const strings: Record<string, string> = { cniversion: '', name: '', type: '' };
  let ipamType = '';
  for (const [key, item] of Object.entries(raw)) {
    const folded = key.toLowerCase();
    const check = FIELDS[folded];
    if (!check) continue;
    const problem = check(item);
    if (problem) return { ok: false, error: `"${key}" holds ${problem}` };
    // A JSON null leaves a Go field as it was, so only strings overwrite.
    if (folded in strings && typeof item === 'string') strings[folded] = item;
    if (folded === 'ipam' && item !== null) ipamType = ipamTypeOf(item, ipamType);
  }
  if (strings.type === '') return { ok: false, error: "missing 'type'" };
  return {
    ok: true,
    conf: { cniVersion: strings.cniversion ?? '', name: strings.name ?? '', type: strings.type ?? '', ipamType, raw },
  };
}

function ipamTypeOf(ipam: unknown, previous: string): string {
  if (!isJsonObject(ipam)) return previous;
  let type = previous;
  for (const [key, item] of Object.entries(ipam))
    if (key.toLowerCase() === 'type' && typeof item === 'string') type = item;
  return type;
}

/** How Go's error messages name a JSON value's type. */
export function goKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  return typeof value;
}
