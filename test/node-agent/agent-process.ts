import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeKubeconfig } from '../harness/kube-api/kubeconfig.js';
import type { KubeApi } from '../harness/kube-api/server.js';

const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface AgentProcess {
  readonly child: ChildProcess;
  readonly logs: Record<string, unknown>[];
  readonly base: string;
  metrics(): Promise<string>;
  /** SIGTERM, then the exit code and how long the exit took. */
  terminate(): Promise<{ code: number | null; ms: number }>;
  kill(): void;
}

/** The agent's JSON log lines as they arrive (other stdout lines skipped), and its stderr so far. */
export function captureOutput(child: ChildProcess): { logs: Record<string, unknown>[]; stderr: () => string } {
  const logs: Record<string, unknown>[] = [];
  let buffer = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) if (line.trim().startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return { logs, stderr: () => stderr };
}

/** Polls `check` until it returns a value (bounded: a hung agent fails the test, it never hangs it). */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  limitMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The real `interlock node` (dist/), as its own process, against the stand-in. */
export async function startAgent(
  api: KubeApi,
  args: readonly string[],
  env: Record<string, string> = {},
  nodeFlags: readonly string[] = [],
  mesh = 'linkerd',
): Promise<AgentProcess> {
  // The agent reads its kubeconfig once, before it logs that it started: the directory goes then,
  // not when the agent exits, so a worker killed while the agent runs leaves nothing in /tmp.
  const dir = mkdtempSync(join(tmpdir(), 'interlock-node-'));
  const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  const child = spawn(
    process.execPath,
    [...nodeFlags, MAIN, 'node', '--node-name', 'node-a', '--mesh', mesh, '--listen', '127.0.0.1:0', ...args],
    { env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const { logs, stderr } = captureOutput(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const started = await waitFor(
    `the agent to start (stderr: ${stderr()})`,
    () => logs.find((line) => line.msg === 'node agent started'),
    20_000,
  )
    .catch((error: unknown) => {
      if (child.exitCode === null) child.kill('SIGKILL');
      throw error;
    })
    .finally(() => rmSync(dir, { recursive: true, force: true }));
  const base = `http://${String(started.listen)}`;
  return {
    child,
    logs,
    base,
    metrics: async () => (await fetch(`${base}/metrics`)).text(),
    terminate: async () => {
      const at = Date.now();
      child.kill('SIGTERM');
      const code = await exited;
      return { code, ms: Date.now() - at };
    },
    kill: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** A metric's value from Prometheus text (`name{labels}`), 0 when absent. */
export function metric(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line ? Number(line.split(' ')[1]) : 0;
}
