import type { ChildProcess } from 'node:child_process';
import { verdictLine, type InterlockRun } from './pod-namespace.js';

/**
 * Resolves once the validator has logged `message` (it is then in the phase after it). A run that
 * ends first (its own early verdict, the watchdog, a test's kill guard) never logs it: that
 * rejects, naming how the run ended, instead of leaving the test waiting for vitest's limit.
 * `running` is the run's `collect()`, attached before this is called.
 */
export async function untilLogged(child: ChildProcess, message: string, running: Promise<InterlockRun>): Promise<void> {
  const seen = await new Promise<boolean>((resolve) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`"msg":"${message}"`)) resolve(true);
    });
    // 'close' follows the last 'data' of stdout: a line that was logged has resolved by then.
    child.once('close', () => resolve(false));
  });
  if (!seen) throw notReached(message, await running);
}

function notReached(message: string, run: InterlockRun): Error {
  const ended = run.signal === null ? `exit ${run.exitCode}` : `signal ${run.signal}`;
  return new Error(
    `the test's premise failed: the run ended (${ended}) before it logged "${message}"; ` +
      `termination message: ${verdictLine(run.terminationMessage) || '(none)'}\n` +
      `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`,
  );
}
