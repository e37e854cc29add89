import { constants, fstatSync, openSync, writeSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import type { LogFormat, LogLevel } from '../config/validate-config.js';

export type { Logger };

/**
 * pino writing synchronously to stdout: an init container exits right after its last line, and
 * a worker-thread transport would lose it (and cost a thread at start-up).
 */
export function createLogger(format: LogFormat, level: LogLevel, fd = nonBlockingStdout()): Logger {
  const stall = { pausesLeft: MAX_PAUSES };
  const write =
    format === 'json'
      ? (line: string) => writeAll(fd, line, stall)
      : (line: string) => writeAll(fd, plainLine(line), stall);
  return pino(
    {
      level,
      base: { name: 'interlock' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write },
  );
}

/**
 * stdout, reopened non-blocking when it is a pipe (a new open file description, so the writer
 * who handed it over keeps its own mode): a log pipe nobody reads must block neither the run nor
 * the deadline watchdog inside a write(2). A file or a terminal is used as it is.
 */
function nonBlockingStdout(): number {
  try {
    if (!fstatSync(1).isFIFO()) return 1;
    return openSync('/proc/self/fd/1', constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    return 1;
  }
}

// At most 500 ms of waiting on a stalled stdout between two lines that got through.
const MAX_PAUSES = 100;
// Made on first use: a start-up snapshot cannot hold a SharedArrayBuffer.
let pause: Int32Array | undefined;

/**
 * Writes the whole line. A pipe's reader that is slow makes a non-blocking stdout answer EAGAIN:
 * wait 5 ms and retry rather than drop the line, within a budget shared by every line until one
 * gets through whole, so a stdout that never drains costs 500 ms once, not per line.
 */
function writeAll(fd: number, text: string, stall: { pausesLeft: number }): void {
  const bytes = Buffer.from(text, 'utf8');
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(fd, bytes, written, bytes.length - written);
    } catch (error) {
      // A closed stdout must not turn a verdict into a crash; the exit code still tells.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || stall.pausesLeft <= 0) return;
      pause ??= new Int32Array(new SharedArrayBuffer(4));
      Atomics.wait(pause, 0, 0, 5);
      stall.pausesLeft--;
    }
  }
  stall.pausesLeft = MAX_PAUSES;
}

const OMITTED = new Set(['level', 'time', 'msg', 'name', 'pid', 'hostname']);

/** `2026-11-21T08:00:00.000Z INFO message key=value ...`: for humans reading `kubectl logs`. */
function plainLine(jsonLine: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const fields = Object.entries(record)
    .filter(([key]) => !OMITTED.has(key))
    .map(([key, value]) => `${key}=${textOf(value)}`);
  const level = textOf(record.level ?? 'info').toUpperCase();
  return `${textOf(record.time ?? '')} ${level} ${textOf(record.msg ?? '')}${fields.length ? ' ' + fields.join(' ') : ''}\n`;
}

/** A string as it is, anything else as its JSON (a parsed line holds nothing JSON cannot print). */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
