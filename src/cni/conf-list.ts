import { cniVersionGreater } from './cni-version.js';
import { isJsonObject } from './go-json.js';
import { decodeNetConf, goKind, type NetConf } from './net-conf.js';

/**
 * The libcni release whose parsing rules apply: containerd 1.6 in Debian 12 is built against
 * libcni 1.1.2 (go-cni 1.1.7); CRI-O's ocicni (HEAD) vendors libcni 1.3.0, which reads
 * `cniVersions`, accepts "true"/"false" strings for its booleans and lets a list have no
 * `plugins` key (plugins may then come from a subdirectory).
 */
export type Libcni = '1.1' | '1.3';

/** The spec version libcni 1.3.0 implements; `cniVersions` entries above it are ignored. */
const LIBCNI_13_CURRENT = '1.1.0';

export interface ConfList {
  readonly name: string;
  readonly cniVersion: string;
  readonly disableCheck: boolean;
  readonly plugins: readonly NetConf[];
  /** Only libcni 1.3: plugins come only from the file, never from `<dir>/<name>/`. */
  readonly loadOnlyInlinedPlugins: boolean;
}

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

const bad = (error: string): { ok: false; error: string } => ({ ok: false, error });

/** libcni ConfListFromBytes over an already decoded JSON value. */
export function confListFromValue(value: unknown, libcni: Libcni): Parsed<ConfList> {
  if (value !== null && !isJsonObject(value)) return bad(`the file holds a JSON ${goKind(value)}, not an object`);
  const raw = value ?? {};
  if (!Object.hasOwn(raw, 'name')) return bad('no "name"');
  if (typeof raw.name !== 'string') return bad(`"name" is a ${goKind(raw.name)}, not a string`);
  if (Object.hasOwn(raw, 'cniVersion') && typeof raw.cniVersion !== 'string')
    return bad(`"cniVersion" is a ${goKind(raw.cniVersion)}, not a string`);
  let cniVersion = typeof raw.cniVersion === 'string' ? raw.cniVersion : '';
  if (libcni === '1.3' && Object.hasOwn(raw, 'cniVersions')) {
    const chosen = chooseFromCniVersions(raw.cniVersions, cniVersion);
    if (!chosen.ok) return chosen;
    cniVersion = chosen.value;
  }
  const flags: Record<string, boolean> = {};
  for (const key of libcni === '1.1' ? ['disableCheck'] : ['disableCheck', 'disableGC', 'loadOnlyInlinedPlugins']) {
    const flag = readBool(raw, key, libcni);
    if (!flag.ok) return flag;
    flags[key] = flag.value;
  }
  const loadOnlyInlinedPlugins = flags.loadOnlyInlinedPlugins === true;
  const base = { name: raw.name, cniVersion, disableCheck: flags.disableCheck === true, loadOnlyInlinedPlugins };
  if (!Object.hasOwn(raw, 'plugins')) {
    if (libcni === '1.1') return bad('no "plugins" key');
    if (loadOnlyInlinedPlugins) return bad('"loadOnlyInlinedPlugins" is true and there is no "plugins" key');
    return { ok: true, value: { ...base, plugins: [] } };
  }
  if (!Array.isArray(raw.plugins)) return bad(`"plugins" is a ${goKind(raw.plugins)}, not a list`);
  if (raw.plugins.length === 0) return bad('"plugins" is empty');
  const plugins: NetConf[] = [];
  for (const [index, item] of raw.plugins.entries()) {
    const decoded = decodeNetConf(item);
    if (!decoded.ok) return bad(`plugin ${index}: ${decoded.error}`);
    plugins.push(decoded.conf);
  }
  return { ok: true, value: { ...base, plugins } };
}

/** libcni 1.1: a bool; libcni 1.3: a bool or the strings "true"/"false" in any case. */
function readBool(raw: Readonly<Record<string, unknown>>, key: string, libcni: Libcni): Parsed<boolean> {
  if (!Object.hasOwn(raw, key)) return { ok: true, value: false };
  const value = raw[key];
  if (typeof value === 'boolean') return { ok: true, value };
  if (libcni === '1.3' && typeof value === 'string' && ['true', 'false'].includes(value.toLowerCase()))
    return { ok: true, value: value.toLowerCase() === 'true' };
  return bad(`"${key}" is ${typeof value === 'string' ? JSON.stringify(value) : `a ${goKind(value)}`}, not a boolean`);
}

/** libcni 1.3: the highest of `cniVersions` (and `cniVersion`) this libcni implements. */
function chooseFromCniVersions(value: unknown, cniVersion: string): Parsed<string> {
  if (!Array.isArray(value)) return bad(`"cniVersions" is a ${goKind(value)}, not a list`);
  const usable: string[] = [];
  for (const [index, item] of value.entries()) {
    if (typeof item !== 'string') return bad(`"cniVersions"[${index}] is a ${goKind(item)}, not a string`);
    const greater = cniVersionGreater(item, LIBCNI_13_CURRENT);
    if (greater === undefined) return bad(`"cniVersions"[${index}] ${JSON.stringify(item)} is not a version`);
    if (!greater) usable.push(item);
  }
  if (cniVersion !== '') {
    const greater = cniVersionGreater(cniVersion, LIBCNI_13_CURRENT);
    if (greater === undefined) return bad(`"cniVersion" ${JSON.stringify(cniVersion)} is not a version`);
    if (!greater) usable.push(cniVersion);
  }
  const highest = usable.reduce<string | undefined>(
    (best, item) => (best === undefined || cniVersionGreater(item, best) ? item : best),
    undefined,
  );
  return { ok: true, value: highest ?? cniVersion };
}

/**
 * libcni ConfFromBytes then ConfListFromConf: a single-plugin file becomes a list named after
 * the plugin's `name`, at the plugin's `cniVersion`, whose one plugin is the whole file.
 */
export function wrappedConfFromValue(value: unknown): Parsed<ConfList> {
  const decoded = decodeNetConf(value);
  if (!decoded.ok) return decoded;
  const { conf } = decoded;
  return {
    ok: true,
    value: {
      name: conf.name,
      cniVersion: conf.cniVersion,
      disableCheck: false,
      loadOnlyInlinedPlugins: false,
      plugins: [conf],
    },
  };
}

/** libcni's ValidateNetworkName, which every ADD runs on the list's name. */
export function networkNameProblem(name: string): string | undefined {
  if (name === '') return 'the network has no name ("missing network name")';
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name))
    return `the network name ${JSON.stringify(name)} has characters libcni refuses`;
  return undefined;
}
