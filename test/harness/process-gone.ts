import { readFileSync } from 'node:fs';

/** Running or sleeping; a zombie (killed, not yet reaped by whoever inherited it) is dead. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Whether `pid` is gone within `withinMs`: a group's SIGKILL takes effect at once, but the kernel
 * may take a moment to finish each process, longer on a loaded machine.
 */
export async function gone(pid: number, withinMs: number): Promise<boolean> {
  const pollMs = 10;
  for (let waited = 0; waited < withinMs && alive(pid); waited += pollMs)
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  return !alive(pid);
}
