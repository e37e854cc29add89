import { bridgePlugin } from './cni-node.js';

/** One entry of a generated configuration directory. */
export interface GeneratedEntry {
  readonly name: string;
  /** Absent for a directory. */
  readonly text?: string;
  /** The bridge subnet index of a file that would give pods an address, when it parses. */
  readonly subnet?: number;
  readonly kind: string;
}

const PREFIXES = ['00', '01', '05', '10', '10', '20', '50', '9', '99', 'a', 'Z', '_', '-'];
const WORDS = ['calico', 'flannel', 'cilium', 'linkerd', 'istio', 'bridge', 'net', 'x'];
const EXTENSIONS = ['.conf', '.conflist', '.conflist', '.conflist', '.json', '.conf', '.CONF', '.conf.bak', ''];
const VERSIONS = ['0.3.1', '0.4.0', '1.0.0'];

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/**
 * A random configuration directory (seeded): random names and extensions; valid lists and
 * single plugins, each with its own bridge and subnet; invalid and partial JSON; lists with no
 * or empty plugins; plugins with no type; directories with counted names; keys in other cases.
 */
export function randomCniDir(random: Random, firstSubnet: number): GeneratedEntry[] {
  const count = random() < 0.06 ? 0 : 1 + Math.floor(random() * 5);
  const entries: GeneratedEntry[] = [];
  const names = new Set<string>();
  for (let i = 0; i < count; i++) {
    let name: string;
    const entry = randomEntry(random, firstSubnet + i);
    do name = `${pick(random, PREFIXES)}-${pick(random, WORDS)}${extensionFor(random, entry.kind)}`;
    while (names.has(name));
    names.add(name);
    entries.push({ ...entry, name });
  }
  return entries;
}

/** Mostly the extension that fits the content, often not: a list in a .conf, a plugin in a .conflist, uncounted names. */
function extensionFor(random: Random, kind: string): string {
  if (random() < 0.35) return pick(random, EXTENSIONS);
  return kind === 'conf' ? pick(random, ['.conf', '.json']) : '.conflist';
}

function randomEntry(random: Random, subnet: number): Omit<GeneratedEntry, 'name'> {
  const cniVersion = pick(random, VERSIONS);
  const network = `net${subnet}`;
  const roll = random();
  if (roll < 0.4) {
    const plugins: unknown[] = [bridgePlugin(subnet)];
    if (random() < 0.5) plugins.push({ type: 'portmap', capabilities: { portMappings: true } });
    if (random() < 0.4) plugins.push({ type: 'linkerd-cni' });
    return {
      kind: 'conflist',
      subnet,
      text: JSON.stringify({ cniVersion, name: network, plugins }, null, random() < 0.5 ? 2 : 0),
    };
  }
  if (roll < 0.65) {
    const plugin = { cniVersion, name: network, ...bridgePlugin(subnet) };
    // Go matches struct fields case-insensitively: "Type" and "Name" fill type and name.
    const text =
      random() < 0.25
        ? JSON.stringify(plugin).replace('"type":"bridge"', '"Type":"bridge"').replace('"name":', '"Name":')
        : JSON.stringify(plugin);
    return { kind: 'conf', subnet, text };
  }
  const valid = JSON.stringify({ cniVersion, name: network, plugins: [bridgePlugin(subnet)] });
  if (roll < 0.73) return { kind: 'partial', text: valid.slice(0, 1 + Math.floor(random() * (valid.length - 2))) };
  if (roll < 0.8)
    return {
      kind: 'invalid',
      text: pick(random, [
        valid.replace('"plugins":[', '"plugins":[,'),
        `${valid}}`,
        valid.replace(/"/g, "'"),
        'cniVersion: 1.0.0',
      ]),
    };
  if (roll < 0.85) return { kind: 'empty-plugins', text: JSON.stringify({ cniVersion, name: network, plugins: [] }) };
  if (roll < 0.9)
    return { kind: 'no-name', subnet, text: JSON.stringify({ cniVersion, plugins: [bridgePlugin(subnet)] }) };
  if (roll < 0.95)
    return {
      kind: 'no-type',
      text: JSON.stringify({ cniVersion, name: network, plugins: [{ ...bridgePlugin(subnet), type: undefined }] }),
    };
  return { kind: 'directory' };
}
