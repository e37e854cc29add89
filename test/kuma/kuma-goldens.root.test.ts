import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { makeNamespace, removeNamespace } from '../ambient/dumps.js';
import { blanketReturnFirst, changeRedirectPort, dropProxyUidExclusion, type Mutant } from '../explain/mutants.js';

/**
 * Kuma's own goldens of its transparent proxy (kumahq/kuma test/transparentproxy/testdata, pinned
 * in test/fixtures/meshes/sources.json), loaded into a real namespace by the real restore tools of
 * the golden's backend and dumped back: `explain --mesh kuma` passes each, and each bypass mutant
 * of the IPv4 half or of the IPv6 half fails naming the rule. Upstream's test writes
 * `ifPlaceholder` for the loopback interface's name (its harness does not know the host's); it is
 * `lo` in a pod. The goldens with upstream's flag sets: kuma-flag-goldens.root.test.ts.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/meshes/kuma');
const namespace = makeNamespace('kuma-goldens');
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-kuma-'));
afterAll(() => {
  removeNamespace(namespace);
  rmSync(scratch, { recursive: true, force: true });
});

interface KumaCase {
  readonly tag: string;
  readonly stem: string;
  readonly backend: 'nft' | 'legacy';
  readonly v4: string;
  readonly v6: string;
}

/**
 * Each tag's default-flag goldens, the IPv4 and IPv6 files paired, for the backend each names:
 * `-nft` and `-legacy` theirs; `.iptables` is the distribution's default binary (nft on Debian 12),
 * loaded by the legacy tools too. Distributions whose iptables prints the same rules differently
 * (Debian 10's and Ubuntu 20.04's iptables-nft, Amazon Linux 2's legacy) are pinned beside Debian 12.
 */
function kumaCases(): KumaCase[] {
  const out: KumaCase[] = [];
  for (const tag of readdirSync(ROOT).sort()) {
    const dir = path.join(ROOT, tag, 'transparentproxy');
    for (const file of readdirSync(dir).sort()) {
      const match = /^(.+)\.iptables(-nft|-legacy)?\.golden$/.exec(file);
      if (!match) continue;
      const [, stem = '', suffix] = match;
      const text = (name: string) => readFileSync(path.join(dir, name), 'utf8').replaceAll('ifPlaceholder', 'lo');
      const v6name = file.replace('.iptables', '.ip6tables');
      const backend = suffix === '-nft' ? 'nft' : 'legacy';
      out.push({ tag, stem: `${stem}${suffix ?? ''}`, backend, v4: text(file), v6: text(v6name) });
    }
  }
  return out;
}

function loadAndDump(kumaCase: KumaCase): { v4: string; v6: string } {
  const run = (tool: string, input?: string) =>
    execFileSync('ip', ['netns', 'exec', namespace, tool], { input, encoding: 'utf8' });
  for (const family of ['iptables', 'ip6tables'])
    for (const backend of ['nft', 'legacy'])
      run(`${family}-${backend}-restore`, '*nat\nCOMMIT\n*raw\nCOMMIT\n*mangle\nCOMMIT\n');
  run(`iptables-${kumaCase.backend}-restore`, kumaCase.v4);
  run(`ip6tables-${kumaCase.backend}-restore`, kumaCase.v6);
  return { v4: run(`iptables-${kumaCase.backend}-save`), v6: run(`ip6tables-${kumaCase.backend}-save`) };
}

async function explain(kumaCase: KumaCase, v4: string, v6: string, name: string) {
  const stem = path.join(scratch, `${kumaCase.tag}-${kumaCase.stem}-${name}`);
  writeFileSync(`${stem}.v4`, v4);
  writeFileSync(`${stem}.v6`, v6);
  const flag = kumaCase.backend === 'nft' ? '' : '-legacy';
  return runExplain(
    ['--mesh=kuma', '--family=dual', `--iptables${flag}-save=${stem}.v4`, `--ip6tables${flag}-save=${stem}.v6`],
    { INTERLOCK_DNS_CAPTURE: 'false' },
  );
}

const cases = kumaCases();

describe("explain --mesh kuma passes Kuma's own transparent-proxy goldens, loaded by the real tools", () => {
  it('covers 2.9, 2.11 and the newest release, both backends, each distribution whose iptables prints them apart', () => {
    expect(new Set(cases.map((kumaCase) => kumaCase.tag))).toEqual(new Set(['2.9.19', '2.11.7', '2.14.3']));
    expect(new Set(cases.map((kumaCase) => kumaCase.backend))).toEqual(new Set(['nft', 'legacy']));
    const distributions = (tag: string) =>
      new Set(
        cases
          .filter((kumaCase) => kumaCase.tag === tag)
          .map((kumaCase) => kumaCase.stem.replace(/(-default)?(-nft|-legacy)?$/, '')),
      );
    expect(distributions('2.9.19')).toEqual(new Set(['amazon-linux-2', 'debian-10', 'debian-12', 'ubuntu-20-04']));
    expect(distributions('2.11.7')).toEqual(distributions('2.9.19'));
    expect(distributions('2.14.3')).toEqual(new Set(['amazon-linux-2', 'debian-12', 'ubuntu-20-04']));
    expect(cases).toHaveLength(18);
  });

  for (const kumaCase of cases) {
    it(`${kumaCase.tag} ${kumaCase.stem} (${kumaCase.backend}): passes; each bypass mutant of either family fails naming its rule`, async () => {
      const dump = loadAndDump(kumaCase);
      expect(dump.v4).toContain('KUMA_MESH_OUTBOUND');
      const passed = await explain(kumaCase, dump.v4, dump.v6, 'golden');
      expect(passed.stderr).toBe('');
      expect(passed.stdout).toContain('PASSED');
      expect(passed.exitCode).toBe(0);
      for (const family of ['v4', 'v6'] as const) {
        const mutants: Array<[string, Mutant | undefined]> = [
          ['outbound port', changeRedirectPort(dump[family], 15001, 15002)],
          ['inbound port', changeRedirectPort(dump[family], 15006, 15007)],
          ['uid exclusion', dropProxyUidExclusion(dump[family], '5678')],
          ['blanket return', blanketReturnFirst(dump[family], 'KUMA_MESH_OUTBOUND')],
        ];
        for (const [name, mutant] of mutants) {
          const label = `${family} ${name}`;
          expect(mutant, label).toBeDefined();
          if (!mutant) continue;
          const v4 = family === 'v4' ? mutant.text : dump.v4;
          const v6 = family === 'v6' ? mutant.text : dump.v6;
          const failed = await explain(kumaCase, v4, v6, label.replaceAll(' ', '-'));
          expect(failed.exitCode, label).not.toBe(0);
          expect(failed.stdout + failed.stderr, label).toContain(mutant.mustName);
        }
      }
    });
  }
});
