import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCniCheck } from '../../src/cli/commands/cni-check/run.js';
import { auditCni } from '../../src/cni/audit-cni.js';
import { confFiles, goSortByName } from '../../src/cni/conf-files.js';
import { containerdLoad } from '../../src/cni/containerd-model.js';
import { prng } from '../harness/prng.js';
import { fixture, inventory, listing } from './listing.js';

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

const TYPES = ['bridge', 'calico', 'linkerd-cni', 'portmap', 'gone', ''];
/** Texts that are sometimes configurations, sometimes almost, sometimes nothing like one. */
function randomText(random: Random): string {
  const plugin = () =>
    random() < 0.1
      ? pick(random, [null, 5, 'x', [], { name: 'x' }])
      : { type: pick(random, TYPES), ...(random() < 0.3 ? { ipam: { type: 'host-local' } } : {}) };
  const value = pick(random, [
    () => ({
      cniVersion: '1.0.0',
      name: 'meshed',
      plugins: [{ type: 'bridge', ipam: { type: 'host-local' } }, { type: 'linkerd-cni' }],
    }),
    () => ({
      cniVersion: pick(random, ['1.0.0', '0.3.1', '', 7, null]),
      name: pick(random, ['net', '', 'a b', null, 3]),
      plugins: Array.from({ length: Math.floor(random() * 4) }, plugin),
    }),
    () => ({
      cniVersion: '0.3.1',
      name: 'single',
      type: pick(random, TYPES),
      ...(random() < 0.3 ? { Type: 'bridge' } : {}),
    }),
    () => pick(random, [[], null, 'text', 12, true]),
    () => ({ name: 'n', plugins: 'bridge', disableCheck: pick(random, [true, 'true', 1]) }),
  ])();
  const text = JSON.stringify(value);
  const roll = random();
  if (roll < 0.15) return text.slice(0, Math.floor(random() * text.length));
  if (roll < 0.25) return text.replace(pick(random, ['{', '"', ':', ',']), pick(random, ['', '}', ',,', "'"]));
  if (roll < 0.3)
    return Array.from({ length: Math.floor(random() * 40) }, () =>
      String.fromCharCode(Math.floor(random() * 256)),
    ).join('');
  return text;
}

function randomListing(random: Random) {
  const files: Record<string, string | null> = {};
  const count = Math.floor(random() * 6);
  for (let i = 0; i < count; i++) {
    const name = `${pick(random, ['0', '1', '9', 'a', 'B', '-', '\u00e9'])}${pick(random, ['0', 'x', ''])}${pick(random, ['.conf', '.conflist', '.json', '.CONF', '', '.conflist.tmp'])}`;
    files[name] = random() < 0.05 ? null : randomText(random);
  }
  return listing(files);
}

describe('fuzz (seeded): the models and the audit over random directories', () => {
  it('never throw; containerd always answers with the first counted file; healthy only when the winning chain really holds the mesh after a primary, with every binary usable', () => {
    const random = prng(12012);
    const plugins = inventory(['bridge', 'calico', 'linkerd-cni', 'portmap']);
    let healthy = 0;
    for (let i = 0; i < 3000; i++) {
      const dir = randomListing(random);
      const first = goSortByName(confFiles(dir.entries))[0]?.name;
      const load = containerdLoad(dir);
      expect(load.ok ? load.networks[0].file : load.error.file).toBe(first);
      for (const runtime of ['containerd', 'crio'] as const) {
        const verdict = auditCni({
          listing: dir,
          runtime,
          meshPlugin: 'linkerd-cni',
          binDirs: ['/opt/cni/bin'],
          inventory: plugins,
        });
        if (!verdict.healthy) continue;
        healthy++;
        const chain = verdict.loads?.chain ?? [];
        expect(chain.indexOf('linkerd-cni')).toBeGreaterThan(0);
        expect(chain.every((type) => plugins.has(type))).toBe(true);
        const text = dir.entries.find((entry) => entry.name === verdict.loads?.file)?.text ?? '';
        expect(() => JSON.parse(text)).not.toThrow();
      }
    }
    // The property above must have been tested on healthy verdicts, not only vacuously.
    expect(healthy).toBeGreaterThan(20);
  });
});

describe('fuzz (seeded): whole cni-check command lines', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'cni-fuzz-'));
    await mkdir(join(root, 'net.d'));
    await mkdir(join(root, 'bin'));
    await writeFile(join(root, 'net.d', '10-calico.conflist'), fixture('10-calico-linkerd.conflist'));
    const quick = `#!/bin/sh\necho '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","1.0.0"]}'\n`;
    for (const type of ['calico', 'portmap', 'bandwidth', 'linkerd-cni', 'istio-cni'])
      await writeFile(join(root, 'bin', type), quick, { mode: 0o755 });
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('answer with a documented exit code and never crash', async () => {
    const random = prng(4242);
    const tokens = () => [
      ...[
        '--mesh',
        '--runtime',
        '--format',
        '--mesh-plugin',
        '--version-timeout',
        '--max-conf-num',
        '--crio-default-network',
        '--cni-conf-dir',
        '--cni-bin-dir',
        '--help',
        '--',
        '-m',
        '--mesh=linkerd',
        '--cni-bin-dir=',
      ],
      ...[
        'linkerd',
        'istio',
        'generic',
        'crio',
        'containerd',
        'json',
        'text',
        '2s',
        '0',
        '-1',
        '',
        ' ',
        '\u0000',
        'x'.repeat(300),
        join(root, 'net.d'),
        join(root, 'bin'),
        '/nonexistent',
        `${join(root, 'bin')},,`,
      ],
    ];
    const allowed = new Set([0, 64, 65, 66, 95, 97, 126]);
    const seen = new Set<number>();
    for (let i = 0; i < 150; i++) {
      const argv = Array.from({ length: Math.floor(random() * 7) }, () => pick(random, tokens()));
      const env =
        random() < 0.3
          ? {
              INTERLOCK_MESH: pick(random, ['linkerd', 'bogus']),
              INTERLOCK_CNI_CONF_DIR: join(root, 'net.d'),
              INTERLOCK_CNI_BIN_DIR: join(root, 'bin'),
            }
          : {};
      const result = await runCniCheck(argv, env);
      expect(allowed.has(result.exitCode), `${JSON.stringify(argv)} -> ${result.exitCode}: ${result.stderr}`).toBe(
        true,
      );
      if (result.exitCode === 64) expect(result.stderr).toMatch(/^interlock cni-check: /);
      seen.add(result.exitCode);
    }
    // Not only flag errors: some command lines got as far as a verdict or an unreadable directory.
    expect([...seen].sort()).toEqual(expect.arrayContaining([0, 64, 66]));
  });
});
