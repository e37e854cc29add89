import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, setChain } from './cluster.js';

// docs/local-cluster.md, followed as a newcomer follows it: its shell blocks from step 2 on, as
// printed, in one bash from the checkout, against the real cluster with no mesh plugin chained.
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const DOC = readFileSync(`${REPO}docs/local-cluster.md`, 'utf8');

/** The `sh` blocks of the sections from "## 2." on, in order. */
function blocksFromStep2(doc: string): string[] {
  const from = doc.indexOf('\n## 2.');
  return [...doc.slice(from).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function bash(script: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      'bash',
      ['-euo', 'pipefail', '-c', script],
      { cwd: REPO, maxBuffer: 16 << 20, timeout: 300_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: stdout + stderr }),
    );
    child.stdin?.end();
  });
}

beforeAll(async () => {
  setChain(undefined);
  await kubectl(['delete', 'namespace', 'demo', '--ignore-not-found', '--wait=true', '--timeout=120s']);
}, 150_000);
afterAll(async () => {
  await kubectl(['delete', 'namespace', 'demo', '--ignore-not-found', '--wait=false']).catch(() => undefined);
});

describe('docs/local-cluster.md, run as printed', () => {
  it('has the four steps it promises to run', () => {
    expect(blocksFromStep2(DOC)).toHaveLength(4);
  });

  it('ends at a blocked pod that kubectl describe explains, then removes it', async () => {
    const ran = await bash(blocksFromStep2(DOC).join('\n'));
    expect(ran.code, ran.out).toBe(0);
    expect(ran.out).toMatch(/^web-\S+\s+0\/2\s+Init:(Error|CrashLoopBackOff|0\/1)\s/m);
    expect(ran.out).toMatch(/Message:\s+InterceptionMissing: the mesh did not capture this pod's traffic/);
    expect(ran.out).toMatch(/Exit Code:\s+95/);
    // Posted by the validator before it exits, so there by the time the wait is over.
    expect(ran.out).toMatch(/Warning\s+InterceptionMissing\s+\S+\s+interlock\s+IPv4 connection to /);
    expect(ran.out).toMatch(/namespace "demo" deleted/);
  }, 320_000);
});
