import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The bundle `npm run build` compiled into the start-up snapshot, and the blob itself.
const SNAPSHOT = fileURLToPath(new URL('../../dist/snapshot/', import.meta.url));
const bundle = await readFile(join(SNAPSHOT, 'interlock.snapshot.cjs'));

async function snapshot(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const flags = (await readFile(join(SNAPSHOT, 'node-flags'), 'utf8')).trim().split(/\s+/);
  const argv = [...flags, '--snapshot-blob', join(SNAPSHOT, 'interlock.blob'), '--', ...args];
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, argv, { encoding: 'utf8', timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the source the start-up snapshot holds', () => {
  // V8 keeps a script's whole source in the heap, as one byte per character only when every
  // character is Latin-1: one Greek "μ" in a regular expression doubled the bundle's share of the blob,
  // and every init container deserialised it.
  it('is ASCII only', () => {
    const offending = bundle.findIndex((byte) => byte > 0x7f);
    expect(offending === -1 ? 'ascii' : bundle.subarray(Math.max(0, offending - 40), offending + 8).toString()).toBe(
      'ascii',
    );
  });

  it('is minified: lines of hundreds of characters, not one a statement', () => {
    const lines = bundle.toString('latin1').split('\n').length;
    expect(bundle.length / lines).toBeGreaterThan(500);
  });

  it('still matches what the escaped characters matched: 20000µs is a duration', async () => {
    // cni-check parses its durations with the same parser as validate, and runs no probe: an
    // unreadable directory is its answer once the flags parsed.
    const parsed = await snapshot(
      'cni-check',
      '--mesh',
      'linkerd',
      '--version-timeout',
      '20000µs',
      '--cni-conf-dir',
      '/nonexistent-interlock',
    );
    expect(parsed.stdout + parsed.stderr).toMatch(/CniConfigUnreadable/);
    const refused = await snapshot(
      'cni-check',
      '--mesh',
      'linkerd',
      '--version-timeout',
      '20000xs',
      '--cni-conf-dir',
      '/nonexistent-interlock',
    );
    expect(refused.stdout + refused.stderr).toMatch(/ConfigInvalid: --version-timeout="20000xs"/);
  });
});
