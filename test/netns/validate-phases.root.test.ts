import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, constants, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { untilLogged } from '../harness/logged.js';
import {
  collect,
  corpusFile,
  verdictLine,
  REPO_ROOT,
  usePods,
  type InterlockRun,
  type PodNamespace,
} from '../harness/pod-namespace.js';

const pod = usePods(afterEach);
const LINKERD_RULES = corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt');
const HUNG_AFTER_MS = 30_000;

async function bounded(child: ChildProcess, terminationLog: string): Promise<InterlockRun> {
  const guard = setTimeout(() => child.kill('SIGKILL'), HUNG_AFTER_MS);
  const run = await collect(child, terminationLog);
  clearTimeout(guard);
  return run;
}

/** A FIFO already full, handed over as a blocking descriptor, and never read: a log pipe nobody drains. */
function fullPipe(ns: PodNamespace): { fd: number; close: () => void } {
  const fifo = join(ns.tmp, 'stdout');
  execFileSync('mkfifo', ['-m', '0666', fifo]);
  const filler = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
  const chunk = Buffer.alloc(4096, 0x2e);
  for (;;) {
    try {
      writeSync(filler, chunk);
    } catch {
      break;
    }
  }
  return { fd: openSync(fifo, constants.O_RDWR), close: () => closeSync(filler) };
}

/** `interlock validate` from dist/ with one adapter that never answers (test/harness/wedged-validate.mjs). */
function spawnWedged(ns: PodNamespace, wedge: string, args: readonly string[]): ChildProcess {
  return spawn(
    'ip',
    [
      'netns',
      'exec',
      ns.pod,
      process.execPath,
      join(REPO_ROOT, 'test/harness/wedged-validate.mjs'),
      wedge,
      'validate',
      '--termination-log',
      ns.terminationLog,
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

/** An iptables-nft-save that ignores SIGTERM and never answers: a rules read that really hangs. */
function wedgedRulesTools(ns: PodNamespace): { env: Record<string, string>; release: () => void } {
  const bin = join(ns.tmp, 'bin');
  const pids = join(ns.tmp, 'pids');
  mkdirSync(bin);
  chmodSync(bin, 0o777);
  writeFileSync(pids, '');
  chmodSync(pids, 0o666);
  return {
    env: { PATH: `${bin}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` },
    release: () => {
      for (const pid of readFileSync(pids, 'utf8').split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    },
  };
}

function writeWedgedTool(ns: PodNamespace, name: string): void {
  const file = join(ns.tmp, 'bin', name);
  writeFileSync(file, `#!/bin/sh\ntrap '' TERM\necho $$ >> ${join(ns.tmp, 'pids')}\nexec sleep 25\n`);
  chmodSync(file, 0o755);
}

/** The probe's destination is drawn at random from the documentation ranges the pod routes. */
const DOC_ADDRESS = String.raw`(192\.0\.2|198\.51\.100|203\.0\.113)\.\d{1,3}`;

describe('the deadline watchdog: each phase wedged, the verdict still arrives with the failure code', () => {
  for (const [wedge, phase, pending] of [
    ['pod-network', 'pod network', /the rtnetlink read of the pod network/],
    ['probe', 'rules read and probe', new RegExp(`the IPv4 probe to ${DOC_ADDRESS}:20001`)],
    ['rules', 'rules read and probe', /the rules read/],
  ] as const) {
    it(`${phase} wedged (${wedge}): ValidationTimeout names the phase and what was pending`, async () => {
      const ns = pod({ sink: 'drop' });
      if (wedge !== 'probe') ns.applyRules(LINKERD_RULES, 'nft');
      const run = await bounded(
        spawnWedged(ns, wedge, ['--mesh', 'linkerd', '--timeout', '2s', '--rules', 'required']),
        ns.terminationLog,
      );
      expect(run.exitCode, run.stderr).toBe(95);
      const first = verdictLine(run.terminationMessage);
      expect(first).toMatch(/^ValidationTimeout: no verdict within the 2s timeout/);
      expect(first).toContain(`the "${phase}" phase`);
      expect(first).toMatch(pending);
    });
  }

  it('nothing left to wait for (a promise that can never settle): a failure at once, never exit 0', async () => {
    const ns = pod();
    const run = await bounded(
      spawnWedged(ns, 'nothing-left', ['--mesh', 'linkerd', '--timeout', '10s']),
      ns.terminationLog,
    );
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^ValidationTimeout: the validator stopped with no verdict and nothing left to wait for, in the "pod network" phase/,
    );
  });

  it('a saver that ignores SIGTERM is killed at the deadline, on the snapshot: RulesUnreadable, named', async () => {
    // The readers stop a tool with SIGKILL (src/rules/read/bounded-child.ts): before, execa's
    // SIGTERM left this one running past the deadline and only the watchdog answered.
    const ns = pod();
    ns.applyRules(LINKERD_RULES, 'nft');
    const tools = wedgedRulesTools(ns);
    try {
      writeWedgedTool(ns, 'iptables-nft-save');
      const run = await ns.runInterlock(['--mesh', 'linkerd', '--rules', 'required', '--timeout', '4s'], {
        caps: true,
        env: tools.env,
      });
      expect(run.exitCode, run.stdout).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(
        /^RulesUnreadable: .*iptables-nft-save failed \(timed out after \d+ ms having printed 0 bytes; the partial output was not analysed\)/,
      );
    } finally {
      tools.release();
    }
  });
});

describe('SIGTERM and SIGINT in each phase, on the snapshot: the termination message and the failure code', () => {
  it('SIGTERM while probing an unmeshed pod: Interrupted, naming the pending probe', async () => {
    const ns = pod({ sink: 'drop' });
    const child = ns.spawnInterlock([
      'validate',
      '--mesh',
      'linkerd',
      '--timeout',
      '20s',
      '--termination-log',
      ns.terminationLog,
    ]);
    const running = bounded(child, ns.terminationLog);
    await untilLogged(child, 'probing interception', running);
    child.kill('SIGTERM');
    const run = await running;
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(
      new RegExp(
        `^Interrupted: SIGTERM ended the validation before a verdict, in the "rules read and probe" phase, waiting for the IPv4 probe to ${DOC_ADDRESS}:20001`,
      ),
    );
  });

  it('SIGINT while the pod network is awaited: Interrupted, naming the phase', async () => {
    const ns = pod({ addresses: false });
    const child = ns.spawnInterlock([
      'validate',
      '--mesh',
      'linkerd',
      '--timeout',
      '20s',
      '--termination-log',
      ns.terminationLog,
    ]);
    const running = bounded(child, ns.terminationLog);
    await untilLogged(child, 'interlock validate starting', running);
    child.kill('SIGINT');
    const run = await running;
    expect(run.exitCode).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^Interrupted: SIGINT ended the validation before a verdict, in the "(start|pod network)" phase/,
    );
  });

  it('SIGTERM while the rules read hangs: Interrupted, naming the rules read', async () => {
    const ns = pod();
    ns.applyRules(LINKERD_RULES, 'nft');
    const tools = wedgedRulesTools(ns);
    try {
      writeWedgedTool(ns, 'iptables-nft-save');
      const child = ns.spawnInterlock(
        ['validate', '--mesh', 'linkerd', '--timeout', '20s', '--termination-log', ns.terminationLog],
        { caps: true, env: tools.env },
      );
      const running = bounded(child, ns.terminationLog);
      await untilLogged(child, 'probing interception', running);
      child.kill('SIGTERM');
      const run = await running;
      expect(run.exitCode).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(/^Interrupted: SIGTERM .* waiting for .*the rules read/);
    } finally {
      tools.release();
    }
  });

  it('a stdout pipe that is never read (the report phase): the verdict and its exit code still arrive', async () => {
    const ns = pod();
    ns.applyRules(LINKERD_RULES, 'nft');
    const stdout = fullPipe(ns);
    const child = ns.spawnInterlock(
      ['validate', '--mesh', 'linkerd', '--timeout', '3s', '--termination-log', ns.terminationLog],
      { stdout: stdout.fd },
    );
    closeSync(stdout.fd);
    const run = await bounded(child, ns.terminationLog);
    stdout.close();
    expect(run.exitCode).toBe(0);
    expect(verdictLine(run.terminationMessage)).toMatch(/^Intercepted: /);
  });
});
