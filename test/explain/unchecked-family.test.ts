import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { decideInspection } from '../../src/rules-check/decide.js';
import { specFromFlags } from '../harness/spec.js';
import { dumpSets, explainArgv, loadManifest } from './corpus.js';

// Issue #36 item 6: a dual-stack pod's rules with an empty IPv6 dump. `validate` fails such a pod
// (its IPv6 address makes IPv6 a family to prove, and nothing captures it); `explain` cannot see
// the pod's addresses, so under --family auto it must say IPv6 was not checked, and under
// --family dual it fails as validate does.

const V4 = 'test/fixtures/corpus/linkerd/cni-default/iptables-nft-save.v4.txt';
const dir = mkdtempSync(join(tmpdir(), 'interlock-unchecked-'));
const EMPTY_V6 = join(dir, 'empty.v6.txt');
writeFileSync(EMPTY_V6, '');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const argv = (...extra: string[]): string[] => [
  '--mesh',
  'linkerd',
  '--iptables-save',
  V4,
  '--ip6tables-save',
  EMPTY_V6,
  ...extra,
];

describe('explain says which family it did not check', () => {
  it('--family auto: passes IPv4 and says IPv6 was not checked, and how to check it', async () => {
    const result = await runExplain(argv(), {});
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^families checked: IPv4; not checked: IPv6, /m);
    expect(result.stdout).toContain('--family dual');
  });

  it('--family auto, JSON: the unchecked family is a field, not only prose', async () => {
    const result = await runExplain(argv('--format=json'), {});
    const report = JSON.parse(result.stdout) as { families: string[]; notChecked: string[] };
    expect(report.families).toEqual(['ipv4']);
    expect(report.notChecked).toEqual(['ipv6']);
  });

  it('--family dual: fails with the mesh failure code, as validate fails the dual-stack pod', async () => {
    const result = await runExplain(argv('--family', 'dual'), {});
    expect(result.exitCode).toBe(95);
    expect(result.stdout).toMatch(/^interlock explain: FAILED: /);
    expect(result.stdout).toMatch(/^families checked: IPv4, IPv6$/m);
  });

  it('both families checked: nothing is said to be unchecked', async () => {
    const testCase = loadManifest().find((c) => c.dir === 'linkerd/ipv6-gid-subnets');
    const set = testCase && dumpSets(testCase).find((s) => s.name === 'iptables-nft');
    expect(set).toBeDefined();
    if (!testCase || !set) return;
    const result = await runExplain(explainArgv(testCase, set), {});
    expect(result.exitCode, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/^families checked: IPv4, IPv6$/m);
    expect(result.stdout).not.toContain('not checked');
  });

  it('validate and explain count expectations the same way', async () => {
    const result = await runExplain(argv(), {});
    const headline = /PASSED: every packet goes where the configuration expects: (\d+) of \1 expectations hold$/m.exec(
      result.stdout,
    );
    const inspection = decideInspection(
      specFromFlags(['--mesh=linkerd']),
      [{ kind: 'read', dump: { backend: 'iptables-nft', family: 'ipv4', source: V4, text: readFileSync(V4, 'utf8') } }],
      { mode: 'auto', families: ['ipv4'] },
    );
    expect(inspection.status).toBe('passed');
    expect(inspection.message).toBe(
      `every packet goes where the configuration expects: ${headline?.[1]} of ${headline?.[1]} expectations hold (iptables-nft)`,
    );
    expect(result.stdout).toMatch(
      /^interlock explain: PASSED: every packet goes where the configuration expects: (\d+) of \1 expectations hold$/m,
    );
  });
});
