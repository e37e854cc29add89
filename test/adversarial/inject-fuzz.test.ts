import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runInject } from '../../src/cli/commands/inject/run.js';
import { prng } from '../harness/prng.js';

type Plain = Record<string, unknown>;
const VALIDATOR = 'istio-validation';

/** A random workload: a kind with a pod template, random init containers, nulls and shared objects. */
function randomObject(random: () => number, index: number): Plain {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const shared = { name: 'shared', value: 'x' };
  const container = (name: string): Plain => ({
    name,
    image: pick(['a:1', 'b@sha256:00', 'c']),
    ...(random() < 0.3 ? { env: [shared, shared] } : {}),
    ...(random() < 0.2 ? { args: pick([null, [], ['--x', '1']]) } : {}),
  });
  const inits = pick([undefined, null, [], [container('setup')], [container('istio-init'), container('later')]]);
  const spec: Plain = {
    ...(inits === undefined ? {} : { initContainers: inits }),
    containers: [container('app'), container('istio-proxy')],
    ...(random() < 0.2 ? { volumes: null } : {}),
  };
  const kind = pick(['Pod', 'Deployment', 'Job', 'ConfigMap']);
  const metadata = { name: `o${index}`, ...(random() < 0.2 ? { labels: { a: shared.value } } : {}) };
  if (kind === 'Pod') return { apiVersion: 'v1', kind, metadata, spec };
  if (kind === 'ConfigMap') return { apiVersion: 'v1', kind, metadata, data: { k: pick(['v', null, '---']) } };
  return { apiVersion: 'apps/v1', kind, metadata, spec: { template: { metadata: {}, spec } } };
}

/** The input as Kubernetes would read it, with each pod template's validator taken out. */
function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (typeof value !== 'object' || value === null) return value;
  const out: Plain = {};
  for (const [key, inner] of Object.entries(value)) {
    const added = { initContainers: VALIDATOR, volumes: 'interlock-podinfo' }[key];
    if (added) {
      const kept = Array.isArray(inner) ? inner.filter((item) => (item as Plain).name !== added) : [];
      if (kept.length > 0) out[key] = normalise(kept);
    } else out[key] = normalise(inner);
  }
  return out;
}

function validators(value: unknown): number[] {
  if (Array.isArray(value)) return value.flatMap(validators);
  if (typeof value !== 'object' || value === null) return [];
  const own = Object.entries(value).flatMap(([key, inner]) =>
    key === 'initContainers' && Array.isArray(inner)
      ? [inner.filter((item) => (item as Plain).name === VALIDATOR).length]
      : validators(inner),
  );
  return own;
}

function strict(text: string): unknown[] {
  const docs = parseAllDocuments(text, { uniqueKeys: true, merge: true });
  for (const doc of docs) expect(doc.errors.map((error) => error.message)).toEqual([]);
  return docs.map((doc) => doc.toJS({ maxAliasCount: -1 }));
}

function randomYaml(random: () => number, round: number): string {
  const count = random() < 0.05 ? 400 : 1 + Math.floor(random() * 4);
  const objects = Array.from({ length: count }, (_, index) => randomObject(random, index));
  const options = { aliasDuplicateObjects: random() < 0.5, indentSeq: random() < 0.5, lineWidth: 0 };
  let text =
    random() < 0.3
      ? stringify({ apiVersion: 'v1', kind: 'List', items: objects }, options)
      : objects.map((object) => stringify(object, options)).join(random() < 0.5 ? '---\n' : '--- # c\n');
  if (random() < 0.1) text = text.replace(/^( +)containers:/m, '$1<<: {hostname: h}\n$1containers:');
  if (random() < 0.1) text += '---\n';
  if (random() < 0.1) text = `# round ${round}\n${text}`;
  return text;
}

describe('fuzz: inject output is the input plus exactly one validator per pod template, or exit 64/65', () => {
  it('random YAML (anchors, merge keys, nulls, Lists up to 400 items), seeded', async () => {
    const random = prng(2126);
    const exits = new Map<number, number>();
    for (let round = 0; round < 250; round++) {
      const text = randomYaml(random, round);
      const out = await runInject(['-', '--mesh', 'istio'], {}, () => Buffer.from(text));
      exits.set(out.exitCode, (exits.get(out.exitCode) ?? 0) + 1);
      if (out.exitCode !== 0) {
        expect([64, 65], `round ${round}: ${out.stderr}`).toContain(out.exitCode);
        expect(out.stdout).toBe('');
        continue;
      }
      const before = strict(text);
      const after = strict(out.stdout);
      expect(isDeepStrictEqual(normalise(after), normalise(before)), `round ${round}\n${text}\n=>\n${out.stdout}`).toBe(
        true,
      );
      expect(
        validators(after).every((count) => count === 1),
        `round ${round}`,
      ).toBe(true);
      expect((await runInject(['-', '--mesh', 'istio'], {}, () => Buffer.from(out.stdout))).stdout).toBe(out.stdout);
    }
    // Both outcomes were exercised, so neither branch above is vacuous.
    expect(exits.get(0)).toBeGreaterThan(50);
    expect(exits.get(65)).toBeGreaterThan(5);
  });

  it('random JSON, any indentation: JSON out, same data plus the validator, same indentation', async () => {
    const random = prng(2127);
    for (let round = 0; round < 100; round++) {
      const indent = [0, 2, 4, '\t'][round % 4] as number | string;
      const objects = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, index) => randomObject(random, index));
      const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, indent);
      const out = await runInject(['-', '--mesh', 'istio'], {}, () => Buffer.from(text));
      if (out.exitCode !== 0) {
        expect([64, 65], out.stderr).toContain(out.exitCode);
        continue;
      }
      const after = JSON.parse(out.stdout) as unknown;
      expect(normalise(after)).toEqual(normalise(JSON.parse(text)));
      if (validators(after).length > 0) expect(out.stdout).toBe(JSON.stringify(after, null, indent));
    }
  });
});
