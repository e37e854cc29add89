import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { backendsOf, dumpGolden, makeNamespace, removeNamespace } from './dumps.js';
import { ambientGoldens, goldenEnv, goldenFlags, TEST_PROBE_V6 } from './goldens.js';

const namespace = makeNamespace('amb-explain');
afterAll(() => removeNamespace(namespace));
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-ambient-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const goldens = ambientGoldens();

describe('explain --mesh istio-ambient passes istio-cni’s own goldens, loaded by the real tools', () => {
  it('covers every tag from 1.21.0 to the default branch, both backends', () => {
    const tags = new Set(goldens.map((golden) => golden.tag));
    expect(tags.size).toBe(10);
    expect(goldens.filter((golden) => golden.backend === 'nftables').length).toBeGreaterThan(0);
  });

  for (const golden of goldens) {
    for (const backend of backendsOf(golden)) {
      it(`${golden.tag} ${golden.backend}/${golden.name} (${backend})`, async () => {
        const dump = dumpGolden(namespace, golden, backend, scratch);
        // Only the cross-family probe lines of 1.21-1.23 are refused, and only by iptables (IPv4).
        for (const line of dump.rejected) expect(line).toMatch(new RegExp(`^iptables .*${TEST_PROBE_V6}`));
        const result = await runExplain([...goldenFlags(golden), ...dump.files], goldenEnv(golden));
        expect(result.stderr).toBe('');
        expect(result.stdout).toContain('PASSED');
        expect(result.exitCode).toBe(0);
      });
    }
  }
});
