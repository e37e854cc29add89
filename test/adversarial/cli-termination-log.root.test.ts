import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, usePods, type PodNamespace } from '../harness/pod-namespace.js';

const pod = usePods(afterEach);
const LINKERD = ['--mesh', 'linkerd', '--timeout', '3s'];

/** validate with the given termination log, killed by a guard (and reported as hung) if it never ends. */
async function validateWith(
  ns: PodNamespace,
  terminationLog: string,
  args: readonly string[],
  options: { uid?: number; sigtermAfterMs?: number } = {},
) {
  const child = ns.spawnInterlock(['validate', '--termination-log', terminationLog, ...args], {
    uid: options.uid ?? 65534,
  });
  let hung = false;
  const guard = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, 20_000);
  const term =
    options.sigtermAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGTERM'), options.sigtermAfterMs);
  const run = await collect(child, '/dev/null');
  clearTimeout(guard);
  if (term) clearTimeout(term);
  return { ...run, hung };
}

function fifo(ns: PodNamespace, name: string): string {
  const path = `${ns.tmp}/${name}`;
  execFileSync('mkfifo', ['-m', '0666', path]);
  return path;
}

// Issue 7, item 9: the termination log is never followed through a symlink and never blocks.
describe('the termination log never blocks and never follows a symlink', () => {
  it('a FIFO nobody reads: the verdict still exits (95), not a hang', async () => {
    const ns = pod();
    const run = await validateWith(ns, fifo(ns, 'tl'), LINKERD);
    expect(run.hung, run.stdout).toBe(false);
    expect(run.exitCode).toBe(95);
  });

  it('a FIFO on the ConfigInvalid path: exit 64, not a hang', async () => {
    const ns = pod();
    const run = await validateWith(ns, fifo(ns, 'tl'), ['--mesh', 'linkerd', '--timeout', 'soon']);
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(64);
  });

  it('SIGTERM while the message is due still ends the run with the failure code, never a hang', async () => {
    const ns = pod();
    const run = await validateWith(ns, fifo(ns, 'tl'), ['--mesh', 'linkerd', '--timeout', '10s'], {
      sigtermAfterMs: 6_000,
    });
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(95);
  });

  it('a symlink is not written through, even as root', async () => {
    const ns = pod();
    const target = `${ns.tmp}/precious`;
    writeFileSync(target, 'original\n');
    const link = `${ns.tmp}/tl`;
    symlinkSync(target, link);
    const run = await validateWith(ns, link, LINKERD, { uid: 0 });
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(95);
    expect(readFileSync(target, 'utf8')).toBe('original\n');
    expect(JSON.stringify(run.logs)).toMatch(/termination log not written/);
  });

  it('a directory: refused, the verdict exit code stands', async () => {
    const ns = pod();
    const dir = `${ns.tmp}/dir`;
    mkdirSync(dir);
    chownSync(dir, 65534, 65534);
    const run = await validateWith(ns, dir, LINKERD);
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(95);
    expect(JSON.stringify(run.logs)).toMatch(/"code":"(EISDIR|ENOTREG)"[^}]*termination log not written/);
  });
});
