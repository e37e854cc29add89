import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeTerminationLog } from '../../src/output/termination-log.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop() ?? '', { recursive: true, force: true });
});
function tmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-tl-'));
  dirs.push(dir);
  return dir;
}

describe('writeTerminationLog: a regular file or nothing, never blocking', () => {
  it('writes (and truncates) a regular file; creates a named path only when asked', () => {
    const dir = tmp();
    const path = join(dir, 'tl');
    expect(writeTerminationLog(path, 'first, longer message\n', false)).toEqual({ ok: false, error: 'ENOENT' });
    expect(existsSync(path)).toBe(false);
    expect(writeTerminationLog(path, 'first, longer message\n', true)).toEqual({ ok: true });
    expect(writeTerminationLog(path, 'second\n', false)).toEqual({ ok: true });
    expect(readFileSync(path, 'utf8')).toBe('second\n');
  });

  it('never through a symlink, even to a file it could write', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'target'), 'original\n');
    symlinkSync(join(dir, 'target'), join(dir, 'link'));
    expect(writeTerminationLog(join(dir, 'link'), 'x\n', true)).toEqual({ ok: false, error: 'ELOOP' });
    expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('original\n');
  });

  it('a FIFO without a reader, a FIFO with one, a device and a directory are refused', () => {
    const dir = tmp();
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(writeTerminationLog(fifo, 'x\n', true)).toEqual({ ok: false, error: 'ENXIO' });
    const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'ignore'] });
    let read = '';
    reader.stdout.on('data', (chunk: Buffer) => {
      read += chunk.toString();
    });
    // Whether or not cat has opened its end yet, nothing is written into the FIFO.
    const result = writeTerminationLog(fifo, 'x\n', true);
    expect(result.ok).toBe(false);
    reader.kill();
    expect(read).toBe('');
    expect(writeTerminationLog('/dev/null', 'x\n', false)).toEqual({ ok: false, error: 'ENOTREG' });
    mkdirSync(join(dir, 'dir'));
    expect(writeTerminationLog(join(dir, 'dir'), 'x\n', true)).toEqual({ ok: false, error: 'EISDIR' });
  });
});
