import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/explain-command.js';
import { dumpSets, explainArgv, flagsFor, loadManifest, type CorpusCase, type DumpSet } from './corpus.js';
import {
  benign,
  blanketReturnFirst,
  changeRedirectPort,
  dropProxyUidExclusion,
  nftMutants,
  removeOutputJump,
  type Mutant,
} from './mutants.js';

const cases = loadManifest();
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-mutants-'));
let counter = 0;

function flagValue(argv: readonly string[], name: string): string {
  const prefix = `--${name}=`;
  return argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length) ?? '';
}

/** Runs explain with one file of the set replaced by `text`. */
async function explainWith(testCase: CorpusCase, set: DumpSet, flag: string, text: string) {
  const file = path.join(scratch, `${counter++}.txt`);
  writeFileSync(file, text);
  const replaced: DumpSet = { ...set, files: set.files.map(([f, p]) => [f, f === flag ? file : p] as const) };
  return runExplain(explainArgv(testCase, replaced), {});
}

async function expectKilled(testCase: CorpusCase, set: DumpSet, flag: string, mutant: Mutant): Promise<void> {
  const result = await explainWith(testCase, set, flag, mutant.text);
  expect(result.stderr).toBe('');
  expect(result.exitCode).not.toBe(0);
  expect(result.stdout).toMatch(/FAILED|UNKNOWN/);
  expect(result.stdout).toContain(mutant.mustName);
}

describe('mutants of every corpus case fail, naming the mutated rule', () => {
  for (const testCase of cases) {
    const { argv } = flagsFor(testCase);
    const inboundPort = Number(flagValue(argv, 'inbound-port') || (testCase.mesh === 'linkerd' ? 4143 : 15006));
    const proxyUid = (flagValue(argv, 'proxy-uid') || '1337').split(',')[0] as string;
    for (const set of dumpSets(testCase)) {
      const label = `${testCase.dir} (${set.name})`;
      if (set.name === 'nftables') {
        const file = set.files[0]?.[1] as string;
        for (const { name, mutant } of nftMutants(readFileSync(file, 'utf8'), Number(proxyUid), inboundPort)) {
          if (name === 'drop-uid-exclusion') continue; // asked below with the capture condition
          it(`${label}: ${name}`, async () => {
            expect(mutant, `${name} applies to ${label}`).toBeDefined();
            await expectKilled(testCase, set, 'nft-ruleset', mutant as Mutant);
          });
        }
        continue;
      }
      const [flag, file] = set.files[0] as readonly [string, string];
      const text = readFileSync(file, 'utf8');
      const mesh = testCase.mesh === 'linkerd' ? 'PROXY_INIT_OUTPUT' : 'ISTIO_OUTPUT';
      const mutants: Array<[string, Mutant | undefined]> = [
        ['remove the jump into the mesh chain', removeOutputJump(text)],
        [`change REDIRECT ${inboundPort} to 15999`, changeRedirectPort(text, inboundPort, 15999)],
        ['put a blanket RETURN first in nat OUTPUT', blanketReturnFirst(text, 'OUTPUT')],
        [`put a blanket RETURN first in ${mesh}`, blanketReturnFirst(text, mesh)],
      ];
      for (const [name, mutant] of mutants) {
        it(`${label}: ${name}`, async () => {
          expect(mutant, `${name} applies to ${label}`).toBeDefined();
          await expectKilled(testCase, set, flag, mutant as Mutant);
        });
      }
    }
  }
});

describe('dropping the proxy-uid exclusion', () => {
  // Where outbound capture is off (Istio with no included ranges) nothing would redirect the
  // proxy's traffic anyway: that mutant is equivalent and must still pass, not raise a false alarm.
  for (const testCase of cases) {
    const { argv } = flagsFor(testCase);
    const proxyUid = (flagValue(argv, 'proxy-uid') || (testCase.mesh === 'linkerd' ? '2102' : '1337')).split(
      ',',
    )[0] as string;
    for (const set of dumpSets(testCase)) {
      const label = `${testCase.dir} (${set.name})`;
      it(`${label}: fails where the application's traffic is captured, else is equivalent`, async () => {
        // Captured = some region of application packets (or its DNS) must be redirected outbound;
        // the proxy's own calls over loopback go to its inbound port by design.
        const original = JSON.parse((await runExplain(explainArgv(testCase, set, ['--format=json']), {})).stdout) as {
          expectations: Array<{ id: string; hook: string; expected: string }>;
        };
        const captured = original.expectations.some(
          (e) => e.hook === 'output' && e.expected.startsWith('redirected') && !e.id.includes('proxy-loopback'),
        );
        if (set.name === 'nftables') {
          const file = set.files[0]?.[1] as string;
          const mutant = nftMutants(readFileSync(file, 'utf8'), Number(proxyUid), 15006).find(
            (m) => m.name === 'drop-uid-exclusion',
          )?.mutant;
          expect(mutant).toBeDefined();
          if (captured) await expectKilled(testCase, set, 'nft-ruleset', mutant as Mutant);
          else expect((await explainWith(testCase, set, 'nft-ruleset', (mutant as Mutant).text)).exitCode).toBe(0);
          return;
        }
        const [flag, file] = set.files[0] as readonly [string, string];
        const mutant = dropProxyUidExclusion(readFileSync(file, 'utf8'), proxyUid);
        expect(mutant).toBeDefined();
        if (captured) await expectKilled(testCase, set, flag, mutant as Mutant);
        else expect((await explainWith(testCase, set, flag, (mutant as Mutant).text)).exitCode).toBe(0);
      });
    }
  }
});

describe('benign changes still pass', () => {
  for (const testCase of cases) {
    for (const set of dumpSets(testCase)) {
      if (set.name === 'nftables') continue;
      it(`${testCase.dir} (${set.name}): counters, unrelated chain and rules, comments, a filter table`, async () => {
        const [flag, file] = set.files[0] as readonly [string, string];
        const result = await explainWith(testCase, set, flag, benign(readFileSync(file, 'utf8')));
        expect(result.stderr).toBe('');
        expect(result.stdout).toContain('PASSED');
        expect(result.exitCode).toBe(0);
      });
    }
  }
});

describe('both backends at once', () => {
  for (const testCase of cases.filter((c) => c.dir.startsWith('linkerd/') || c.dir.startsWith('istio-cni/'))) {
    it(`${testCase.dir}: the same rules in legacy and nft agree, and the split is reported`, async () => {
      const sets = dumpSets(testCase);
      const files = sets.flatMap((set) => set.files);
      const result = await runExplain(explainArgv(testCase, { name: 'iptables-nft', files }, ['--format=json']), {});
      const report = JSON.parse(result.stdout) as { status: string; splitAcrossBackends: boolean };
      expect(report.splitAcrossBackends).toBe(true);
      expect(report.status).toBe('passed');
    });
  }
});
