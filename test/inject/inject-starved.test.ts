import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { launchArgs } from '../harness/pod-namespace.js';
import { exitOf, startBusyLoops } from '../harness/starvation.js';

// inject has no deadline, by design: it is a filter (`helm template | interlock inject - |
// kubectl apply -f -`), and when its input ends is its producer's business, as for kubectl or jq;
// a time limit would turn a slow producer on a loaded machine into a failure. What it reads is
// bounded instead: `-f` takes only a regular file (a FIFO or device is refused at once, never
// waited on), and standard input stops at the 16 MiB cap. It writes nothing before the whole input
// is read and injected, and holds no process or lock, so a signal ends it with nothing half done.
const FIXTURE = readFileSync(join(import.meta.dirname, 'fixtures/linkerd-cni-deployment.yaml'));
const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

function inject() {
  const [command, ...args] = launchArgs('snapshot');
  const child = spawn(command!, [...args, 'inject', '-'], { stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const guard = setTimeout(() => child.kill('SIGKILL'), 90_000);
  child.on('exit', () => clearTimeout(guard));
  return { child, stdout: () => stdout, stderr: () => stderr };
}

describe('inject under starvation (busy loops in their own sessions)', () => {
  it('a producer that stalls mid-manifest is waited for: the same output as at once, exit 0', async () => {
    const [command, ...args] = launchArgs('snapshot');
    const atOnce = spawnSync(command!, [...args, 'inject', '-'], { input: FIXTURE, encoding: 'utf8', timeout: 60_000 });
    expect(atOnce.status, atOnce.stderr).toBe(0);
    const loops = startBusyLoops();
    stops.push(loops.stop);
    const run = inject();
    const half = FIXTURE.length >> 1;
    run.child.stdin.write(FIXTURE.subarray(0, half));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    run.child.stdin.end(FIXTURE.subarray(half));
    const { code } = await exitOf(run.child);
    loops.stop();
    expect(code, run.stderr()).toBe(0);
    expect(run.stdout()).toBe(atOnce.stdout);
  }, 120_000);

  it('SIGTERM while its input never ends: it ends by the signal, with no partial manifest on stdout', async () => {
    const loops = startBusyLoops();
    stops.push(loops.stop);
    const run = inject();
    run.child.stdin.write(FIXTURE.subarray(0, FIXTURE.length >> 1));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    run.child.kill('SIGTERM');
    const { code, signal } = await exitOf(run.child);
    loops.stop();
    expect(signal === 'SIGTERM' || code === 143, `code ${code}, signal ${signal}`).toBe(true);
    expect(run.stdout()).toBe('');
  }, 120_000);
});
