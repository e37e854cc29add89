import { spawn } from 'node:child_process';
import type { ToolRun } from './classify.js';

/** What one bounded run may take and how long. */
export interface ChildBounds {
  /** The most stdout kept: one byte more and the child is killed, its output never parsed. */
  readonly stdoutCap: number;
  readonly timeoutMs: number;
  readonly env: NodeJS.ProcessEnv;
}

/** The stderr kept: a failing saver's first lines say why; the rest is dropped as it comes. */
const STDERR_CAP = 64 * 1024;

/** The tail of stdout kept between chunks, so a table header split over two chunks is still seen. */
const CARRY = 128;

/**
 * The table being printed: iptables-save's `*nat` lines, nft JSON's `"table": "nat"` members.
 * The last one seen before the cap is the table that made the output too large.
 */
const TABLE_MARK = /(?:^|\n)\*([A-Za-z0-9_-]{1,32})\n|"table": ?"([A-Za-z0-9_-]{1,32})"/g;

function lastTable(text: string, previous: string | undefined): string | undefined {
  let table = previous;
  for (const match of text.matchAll(TABLE_MARK)) table = match[1] ?? match[2] ?? table;
  return table;
}

/** Stdout as it arrives: counted against the cap, the table being printed noted, kept only under the cap. */
class StdoutCap {
  private readonly chunks: Buffer[] = [];
  private carry = '';
  bytes = 0;
  table: string | undefined;
  overflowed = false;

  constructor(private readonly cap: number) {}

  /** false once the output passed the cap (nothing more is kept). */
  push(chunk: Buffer): boolean {
    if (this.overflowed) return false;
    const seen = this.carry + chunk.toString('latin1');
    this.table = lastTable(seen, this.table);
    this.carry = seen.slice(-CARRY);
    if (this.bytes + chunk.length > this.cap) {
      this.overflowed = true;
      return false;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    return true;
  }

  text(): string {
    return this.overflowed ? '' : Buffer.concat(this.chunks, this.bytes).toString('utf8');
  }
}

/**
 * Runs one reading tool, streaming its output: stdout is counted as it arrives and the child is
 * killed (SIGKILL) the moment it passes `stdoutCap` or the deadline, so the reader never holds
 * more than the cap whatever the tool prints; stderr is kept to 64 KiB. Never rejects.
 */
export function runBoundedChild(file: string, args: readonly string[], bounds: ChildBounds): Promise<ToolRun> {
  const started = performance.now();
  return new Promise((resolve) => {
    const out = new StdoutCap(bounds.stdoutCap);
    let err = '';
    let timedOut = false;
    let code: string | undefined;
    const child = spawn(file, args, { env: bounds.env, stdio: ['ignore', 'pipe', 'pipe'] });
    // A grandchild holding the pipes (a shell's pipeline) must not keep the read open past the stop.
    const stop = () => {
      child.kill('SIGKILL');
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const timer = setTimeout(
      () => {
        timedOut = true;
        stop();
      },
      Math.max(1, Math.ceil(bounds.timeoutMs)),
    );
    child.stdout.on('data', (chunk: Buffer) => {
      if (!out.overflowed && !out.push(chunk)) stop();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < STDERR_CAP) err += chunk.toString('utf8').slice(0, STDERR_CAP - err.length);
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      code = error.code ?? 'EIO';
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      resolve({
        ...(code !== undefined ? { code } : {}),
        timedOut,
        overflowed: out.overflowed,
        exitCode: exitCode ?? undefined,
        ...(signal ? { signal } : {}),
        stdout: out.text(),
        stdoutBytes: out.bytes,
        stderr: err,
        ...(out.table !== undefined ? { table: out.table } : {}),
        elapsedMs: performance.now() - started,
      });
    });
  });
}
