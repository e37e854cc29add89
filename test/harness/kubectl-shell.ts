import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './pod-namespace.js';

export interface ShellRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node dist/cli/main.js`, quoted for a shell pipeline. */
export const INTERLOCK = `${JSON.stringify(process.execPath)} ${JSON.stringify(join(REPO_ROOT, 'dist/cli/main.js'))}`;

/**
 * A shell pipeline as the operator types it, with only PATH, KUBECONFIG and HOME; asynchronous,
 * since the API stand-in answers from this process.
 */
export async function shell(
  environment: { readonly kubeconfig: string; readonly home: string },
  script: string,
  args: readonly string[] = [],
  input?: string,
): Promise<ShellRun> {
  const child = promisify(execFile)('bash', ['-o', 'pipefail', '-c', script, 'pipeline', ...args], {
    env: { PATH: process.env.PATH, KUBECONFIG: environment.kubeconfig, HOME: environment.home },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (input !== undefined) child.child.stdin?.end(input);
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
