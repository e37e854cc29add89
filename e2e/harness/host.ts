import { execa } from 'execa';

/** Every host command is bounded: a hung `ip` or `iptables` must fail the test, not stall CI. */
const HOST_COMMAND_TIMEOUT_MS = 20_000;

export interface HostCommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command on the host (as root) and throws with its output when it fails. */
export async function host(file: string, args: readonly string[], input?: string): Promise<HostCommandResult> {
  const result = await execa(file, args, {
    reject: false,
    timeout: HOST_COMMAND_TIMEOUT_MS,
    ...(input === undefined ? { stdin: 'ignore' as const } : { input }),
  });
  if (result.exitCode !== 0 || result.timedOut) {
    const why = result.timedOut
      ? `timed out after ${HOST_COMMAND_TIMEOUT_MS} ms`
      : `exit ${String(result.exitCode ?? result.code)}`;
    throw new Error(`${file} ${args.join(' ')}: ${why}\n${result.stderr}${result.stdout}`);
  }
  return { stdout: result.stdout, stderr: result.stderr };
}

/** Like host(), for cleanup paths where a missing object is not an error worth failing on. */
export async function hostQuiet(file: string, args: readonly string[]): Promise<void> {
  await execa(file, args, { reject: false, timeout: HOST_COMMAND_TIMEOUT_MS, stdin: 'ignore' });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Rejects when the promise has not settled within `ms`: every wait on a container is bounded. */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
