import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { watchCniConfig } from '../../src/cni/watch-cni-config.js';
import { launchArgs } from '../harness/pod-namespace.js';
import { exitOf, startBusyLoops, steppedClock, untilOrExit } from '../harness/starvation.js';
import { gone as goneWithin } from '../harness/process-gone.js';

// cni-check's one deadline is each plugin's VERSION query (--version-timeout): at it the plugin's
// whole process group is killed and the audit says so. These run the real command (the start-up
// snapshot, what the image runs) against plugins that lose a naive deadline: one that ignores
// SIGTERM, and one whose child keeps its stdout open after it answered.
const STANDIN = fileURLToPath(new URL('../fixtures/cni/mesh-cni-standin.mjs', import.meta.url));
const ANSWER = '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","0.4.0","1.0.0"]}';
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

interface Node {
  readonly confDir: string;
  readonly binDir: string;
  readonly started: string;
  readonly childPid: string;
}

/**
 * A node whose pods' chain is `stuck-cni` then linkerd-cni. `stuck-cni` ignores SIGTERM (and so
 * does the `sleep` it leaves on its stdout); `answers` says whether it prints its answer and exits
 * (the child then holds the pipe) or never answers at all.
 */
function nodeWithAStuckPlugin(answers: boolean): Node {
  const root = mkdtempSync(join(tmpdir(), `interlock-cni-deadline-${process.pid}-`));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const node = { confDir: join(root, 'net.d'), binDir: join(root, 'bin'), started: '', childPid: '' };
  mkdirSync(node.confDir);
  mkdirSync(node.binDir);
  const started = join(root, 'started');
  const childPid = join(root, 'child');
  const plugin = join(node.binDir, 'stuck-cni');
  writeFileSync(
    plugin,
    [
      '#!/bin/sh',
      "trap '' TERM",
      `sleep 100000 & echo $! > '${childPid}'`,
      `echo $$ > '${started}'`,
      answers ? `echo '${ANSWER}'` : 'wait',
      '',
    ].join('\n'),
  );
  chmodSync(plugin, 0o755);
  copyFileSync(STANDIN, join(node.binDir, 'linkerd-cni'));
  const plugins = [{ type: 'stuck-cni' }, { type: 'linkerd-cni' }];
  writeFileSync(join(node.confDir, '10-net.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'net', plugins }));
  cleanups.push(() => killAll(pidsOf({ ...node, started, childPid })));
  return { ...node, started, childPid };
}

function pidsOf(node: Node): number[] {
  return [node.started, node.childPid]
    .filter((file) => existsSync(file))
    .map((file) => Number(readFileSync(file, 'utf8')));
}

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
}

/** Each plugin process the test started is gone within 10 s. */
const gone = (pid: number): Promise<boolean> => goneWithin(pid, 10_000);

/**
 * The real command on the start-up snapshot; with `gcStorm`, on the npm bin (a snapshot refuses
 * V8 flags it was not built with) under a full garbage collection every 10 ms, so a signal or
 * listener held only weakly is collected mid-query and its abort lost.
 */
function cniCheck(
  node: Node,
  timeout: string,
  env: Record<string, string> = {},
  gcStorm = false,
): { child: ChildProcess; out: () => string } {
  const storm = join(node.confDir, '..', 'gc-storm.cjs');
  writeFileSync(storm, 'setInterval(() => globalThis.gc(), 10).unref();\n');
  const [command, ...args] = gcStorm
    ? [process.execPath, '--expose-gc', '--require', storm, ...launchArgs('modules').slice(1)]
    : launchArgs('snapshot');
  const child = spawn(
    command!,
    [...args, 'cni-check', '--mesh', 'linkerd', '--cni-conf-dir', node.confDir, '--cni-bin-dir', node.binDir],
    { env: { PATH: process.env.PATH ?? '', INTERLOCK_CNI_VERSION_TIMEOUT: timeout, ...env }, stdio: 'pipe' },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  // Far past every deadline here: a cni-check still running then is hung, and killed.
  const guard = setTimeout(() => child.kill('SIGKILL'), 90_000);
  child.on('exit', () => clearTimeout(guard));
  return { child, out: () => out };
}

const NO_ANSWER = /stuck-cni did not answer CNI_COMMAND=VERSION \(no answer within 1000 ms/;

describe('cni-check: the VERSION deadline', () => {
  it('holds with the wall clock stepped back an hour mid-query, against a plugin whose child holds its output', async () => {
    const node = nodeWithAStuckPlugin(true);
    const clock = steppedClock();
    cleanups.push(clock.remove);
    const run = cniCheck(node, '1s', clock.env);
    await untilOrExit(run.child, 'the plugin to start', () => existsSync(node.childPid));
    clock.step('-3600');
    const { code } = await exitOf(run.child);
    expect(run.out()).toMatch(NO_ANSWER);
    expect(run.out()).toContain('a process it started still holds its output open');
    expect(code).toBe(95);
    for (const pid of pidsOf(node)) expect(await gone(pid)).toBe(true);
  }, 120_000);

  it('SIGTERM mid-query: the plugin group that ignores SIGTERM is killed, and cni-check exits 143 saying so', async () => {
    const node = nodeWithAStuckPlugin(false);
    const run = cniCheck(node, '60s');
    await untilOrExit(run.child, 'the plugin to start', () => existsSync(node.childPid) && existsSync(node.started));
    run.child.kill('SIGTERM');
    const { code } = await exitOf(run.child);
    expect(code).toBe(143);
    expect(run.out()).toMatch(/Interrupted: SIGTERM ended the CNI audit before a verdict/);
    for (const pid of pidsOf(node)) expect(await gone(pid)).toBe(true);
  }, 120_000);

  it('under a forced garbage collection every 10 ms, SIGTERM still ends the query and its plugin group', async () => {
    const node = nodeWithAStuckPlugin(false);
    const run = cniCheck(node, '60s', {}, true);
    await untilOrExit(run.child, 'the plugin to start', () => existsSync(node.childPid) && existsSync(node.started));
    await new Promise((resolve) => setTimeout(resolve, 300));
    run.child.kill('SIGTERM');
    const { code } = await exitOf(run.child);
    expect(code, run.out()).toBe(143);
    for (const pid of pidsOf(node)) expect(await gone(pid)).toBe(true);
  }, 120_000);
});

describe("the node agent's CNI audit", () => {
  it('closing the watch (the agent stopping) mid-query kills the plugin group, not orphans it', async () => {
    const node = nodeWithAStuckPlugin(false);
    const watch = watchCniConfig(
      {
        confDir: node.confDir,
        binDirs: [node.binDir],
        runtime: 'containerd',
        meshPlugin: 'linkerd-cni',
        versionTimeoutMs: 60_000,
      },
      () => undefined,
    );
    try {
      for (let i = 0; i < 2000 && !(existsSync(node.childPid) && existsSync(node.started)); i++)
        await new Promise((resolve) => setTimeout(resolve, 25));
    } finally {
      watch.close();
    }
    const pids = pidsOf(node);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(await gone(pid)).toBe(true);
  }, 120_000);
});

describe('cni-check under starvation (busy loops in their own sessions)', () => {
  it('a plugin that ignores SIGTERM and never answers still ends the audit: exit 95, named, its group killed', async () => {
    const node = nodeWithAStuckPlugin(false);
    const loops = startBusyLoops();
    cleanups.push(loops.stop);
    const run = cniCheck(node, '1s');
    const { code } = await exitOf(run.child);
    loops.stop();
    expect(run.out()).toMatch(NO_ANSWER);
    expect(code).toBe(95);
    for (const pid of pidsOf(node)) expect(await gone(pid)).toBe(true);
  }, 120_000);
});
