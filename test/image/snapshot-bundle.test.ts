import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The bundle `npm run build` compiled into the start-up snapshot, and the blob itself.
const SNAPSHOT = fileURLToPath(new URL('../../dist/snapshot/', import.meta.url));
const bundle = await readFile(join(SNAPSHOT, 'interlock.snapshot.cjs'));

async function snapshot(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return snapshotIn(SNAPSHOT, ...args);
}

async function snapshotIn(dir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const flags = (await readFile(join(SNAPSHOT, 'node-flags'), 'utf8')).trim().split(/\s+/);
  const argv = [...flags, '--snapshot-blob', join(dir, 'interlock.blob'), '--', ...args];
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

describe("the blob holds the init container's path; every other command loads from beside it", () => {
  // Every process the blob starts deserialises all of it: the webhook's AdmissionReview handling,
  // the node agent's metrics (prom-client) and the YAML of manifest/inject stay out of it.
  it('the blob is built without the other commands, which ship in interlock.commands.cjs', async () => {
    const commands = await readFile(join(SNAPSHOT, 'interlock.commands.cjs'), 'latin1');
    for (const marker of [
      'admission.k8s.io',
      'process_cpu_user_seconds_total',
      'Implicit keys need to be on a single line',
    ]) {
      expect({ marker, inBlob: bundle.includes(marker) }).toEqual({ marker, inBlob: false });
      expect({ marker, beside: commands.includes(marker) }).toEqual({ marker, beside: true });
    }
  });

  // Issue #37: each of these was deserialised by every init container and used by none. pino's
  // own destinations (sonic-boom, which loads node:assert) write nothing when pino is handed a
  // stream; netlink's parsers for the link kinds (VXLAN, bonds, CAN, virtual functions, ...) parse
  // nothing Interlock reads from a link (its name, index and flags).
  it("the blob holds neither pino's destinations nor netlink's parsers of link kinds", () => {
    for (const marker of ['sonic-boom', 'parseVxlan', 'parseBond', 'parseLinkStats64', 'parseVirtualFunction'])
      expect({ marker, inBlob: bundle.includes(marker) }).toEqual({ marker, inBlob: false });
    expect(bundle.includes('parseLinkAttrs')).toBe(true);
  });

  async function installed(files: readonly string[]): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'interlock-blob-'));
    for (const file of files) await copyFile(join(SNAPSHOT, file), join(dir, file));
    return dir;
  }

  it('installed elsewhere, each command runs as before: manifest, help, node --help', async () => {
    const dir = await installed(['interlock.blob', 'interlock.commands.cjs', 'netlink.node']);
    try {
      const manifest = await snapshotIn(dir, 'manifest', '--mesh', 'linkerd');
      expect(manifest.code, manifest.stderr).toBe(0);
      expect(manifest.stdout).toMatch(/^name: linkerd-network-validator$/m);
      const help = await snapshotIn(dir, 'help');
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/^Usage: interlock COMMAND/);
      const node = await snapshotIn(dir, 'node', '--help');
      expect(node.code, node.stderr).toBe(0);
      expect(node.stdout).toMatch(/^Usage: interlock node/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('without interlock.commands.cjs, version still runs and manifest fails naming the file', async () => {
    const dir = await installed(['interlock.blob', 'netlink.node']);
    try {
      const version = await snapshotIn(dir, 'version');
      expect(version.code, version.stderr).toBe(0);
      const manifest = await snapshotIn(dir, 'manifest', '--mesh', 'linkerd');
      expect(manifest.code).toBe(70);
      expect(manifest.stdout).toBe('');
      expect(manifest.stderr).toMatch(/^interlock: InternalError: .*interlock\.commands\.cjs/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
