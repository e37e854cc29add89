import { spawn, type StdioOptions } from 'node:child_process';
import { launchArgs, type Launcher } from '../harness/pod-namespace.js';

/** What a command-line run ended with; `hung` means the guard had to kill it. */
export interface ProcessRun {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly hung: boolean;
}

export interface RunOptions {
  readonly env?: Record<string, string>;
  /** The guard: a run still alive after this long is killed and reported as hung (not a timing assertion). */
  readonly guardMs?: number;
  readonly launcher?: Launcher;
  /** stdout: collected through a pipe (default), or a file descriptor the child writes to directly. */
  readonly stdoutFd?: number;
  /** The reader closes its end of stdout at once (a consumer that went away). */
  readonly closeStdout?: boolean;
}

/** Runs `interlock ARGS` outside any pod namespace (for explain, which reads files only). */
export function runCommand(args: readonly string[], options: RunOptions = {}): Promise<ProcessRun> {
  const [node, ...rest] = launchArgs(options.launcher ?? 'modules');
  const stdio: StdioOptions = ['ignore', options.stdoutFd ?? 'pipe', 'pipe'];
  const child = spawn(node ?? process.execPath, [...rest, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.env },
    stdio,
  });
  let stdout = '';
  let stderr = '';
  let hung = false;
  if (options.closeStdout) child.stdout?.destroy();
  else
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const guard = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, options.guardMs ?? 20_000);
  return new Promise((resolve) => {
    child.on('close', (exitCode, signal) => {
      clearTimeout(guard);
      resolve({ exitCode, signal, stdout, stderr, hung });
    });
  });
}

/** A raw stack trace has lines like `    at fn (file.js:1:2)`. */
export const STACK_LINE = /^\s+at .+[:(]/m;
