// What a benchmark figure was measured on, printed and written beside it: a figure the next
// person cannot place on a machine is not yet a figure.
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, release } from 'node:os';

/** The kernel's 1, 5 and 15 minute load averages, as one string. */
export function loadAverage() {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** nproc, the CPU model, the kernel release, node's version and the date (UTC). */
export function machine() {
  return {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    kernel: release(),
    node: process.version,
    date: new Date().toISOString().slice(0, 10),
  };
}
