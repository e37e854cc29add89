import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { PRESETS } from '../../src/config/interception.js';
import { AnalysisWorkers } from '../../src/node-agent/recheck/worker-analysis.js';

// The node agent's rules analysis runs in a worker thread from `rules-worker.cjs` beside the bundle
// that starts it (src/node-agent/recheck/worker-analysis.ts): the npm bin's dist/bin and the
// image's interlock.commands.cjs in dist/snapshot (image/assemble.mjs copies it there).
const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const LINKERD = readFileSync(
  fileURLToPath(new URL('../fixtures/corpus/linkerd/cni-default/iptables-nft-save.v4.txt', import.meta.url)),
  'utf8',
);
const pools: AnalysisWorkers[] = [];
afterAll(() => pools.forEach((pool) => pool.close()));

describe('the analysis worker ships beside each bundle and answers', () => {
  for (const [bundle, worker] of [
    ['bin/interlock-bundle.cjs', 'bin/rules-worker.cjs'],
    ['snapshot/interlock.commands.cjs', 'snapshot/rules-worker.cjs'],
    ['node-agent/recheck/worker-analysis.js', 'node-agent/recheck/rules-worker.js'],
  ] as const)
    it(`${worker}, found from ${bundle}`, async () => {
      const name = worker.slice(worker.lastIndexOf('/') + 1);
      expect(readFileSync(`${DIST}${bundle}`, 'utf8')).toContain(name);
      const pool = new AnalysisWorkers(`${DIST}${worker}`);
      pools.push(pool);
      const outcomes = [
        {
          kind: 'read' as const,
          dump: {
            backend: 'iptables-nft' as const,
            family: 'ipv4' as const,
            source: 'iptables-nft-save',
            text: LINKERD,
          },
        },
      ];
      const outcome = await pool.analyse(
        { specs: [PRESETS.linkerd.spec], outcomes, families: ['ipv4'], remainingMs: 30_000 },
        30_000,
      );
      expect(outcome.kind === 'answered' && outcome.answer.inspections.map((answer) => answer.status)).toEqual([
        'passed',
      ]);
    });
});
