import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { dumpGolden, makeNamespace, removeNamespace } from './dumps.js';
import { ambientGoldens, goldenEnv, goldenFlags, type AmbientGolden } from './goldens.js';
import { iptablesMutants, nftMutants, type AmbientMutant } from './mutants.js';

/**
 * Every bypass mutant of every pod-side golden fails explain, naming the rule or chain it changed;
 * where the golden captures no inbound (`ingress`), inbound mutants change nothing a packet
 * notices and must still pass. Counts are printed for the report.
 */
const namespace = makeNamespace('amb-mutants');
afterAll(() => removeNamespace(namespace));
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-ambient-mutants-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;
const tally = { killed: 0, equivalentPassed: 0 };
afterAll(() => console.log(`ambient mutants: ${tally.killed} killed, ${tally.equivalentPassed} equivalent passed`));

/** Inbound capture is off in `ingress` goldens (bypass-inbound-capture): an inbound mutant opens nothing. */
function equivalent(golden: AmbientGolden, mutant: AmbientMutant): boolean {
  return mutant.leak === 'inbound' && /^ingress(_ipv6)?$/.test(golden.name);
}

interface Subject {
  readonly label: string;
  readonly files: string[];
  readonly mutants: Array<{ mutant: AmbientMutant; files: string[] }>;
}

function subjectsOf(golden: AmbientGolden): Subject[] {
  if (golden.backend === 'nftables') {
    return [
      {
        label: 'nft',
        files: [],
        mutants: nftMutants(golden.text).map((mutant) => {
          const loaded = { ...golden, name: `${golden.name}-m${counter++}`, text: mutant.text };
          return { mutant, files: dumpGolden(namespace, loaded, 'nftables', scratch).files };
        }),
      },
    ];
  }
  const dump = dumpGolden(namespace, golden, 'nft', scratch);
  return dump.files.map((flagged, index) => {
    const [flag, file] = flagged.split('=') as [string, string];
    const others = dump.files.filter((_, i) => i !== index);
    return {
      label: flag,
      files: dump.files,
      mutants: iptablesMutants(readFileSync(file, 'utf8')).map((mutant) => {
        const mutated = path.join(scratch, `m${counter++}.txt`);
        writeFileSync(mutated, mutant.text);
        return { mutant, files: [...others, `${flag}=${mutated}`] };
      }),
    };
  });
}

describe('bypass mutants of istio-cni’s ambient goldens fail, naming what changed', () => {
  for (const golden of ambientGoldens()) {
    it(`${golden.tag} ${golden.backend}/${golden.name}`, async () => {
      let applied = 0;
      for (const subject of subjectsOf(golden)) {
        for (const { mutant, files } of subject.mutants) {
          applied++;
          const result = await runExplain([...goldenFlags(golden), ...files], goldenEnv(golden));
          const where = `${subject.label}: ${mutant.name}`;
          expect(result.stderr, where).toBe('');
          if (equivalent(golden, mutant)) {
            expect(result.exitCode, where).toBe(0);
            tally.equivalentPassed++;
            continue;
          }
          expect(result.exitCode, `${where}\n${result.stdout}`).not.toBe(0);
          expect(result.stdout, where).toMatch(/FAILED|UNKNOWN/);
          expect(result.stdout, `${where}\n${result.stdout}`).toContain(mutant.mustName);
          tally.killed++;
        }
      }
      expect(applied).toBeGreaterThanOrEqual(4);
    });
  }
});
