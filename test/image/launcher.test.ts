import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM module of the image build, without type declarations.
import { launcherScript } from '../../image/launcher.mjs';

// The image's launcher, as assemble.mjs writes it, run against the snapshot `npm run build` made.
const SNAPSHOT = fileURLToPath(new URL('../../dist/snapshot/', import.meta.url));
const VERSION = (
  JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
let dir: string;
let launcher: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'interlock-launcher-'));
  launcher = join(dir, 'interlock');
  const flags = (await readFile(join(SNAPSHOT, 'node-flags'), 'utf8')).trim();
  await writeFile(
    launcher,
    (launcherScript as (flags: string, blob: string) => string)(flags, join(SNAPSHOT, 'interlock.blob')),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function launch(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('sh', [launcher, ...args], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the image launcher passes every user word to the CLI', () => {
  it("--version prints Interlock's version, not node's", async () => {
    const result = await launch('--version');
    // Node's own --version would print only its version; Interlock's names itself first.
    expect(result.stdout.split('\n')[0]).toBe(`interlock ${VERSION}`);
    expect(result.stdout.trim()).not.toBe(process.version);
  });

  it('a leading flag reaches the CLI, which answers it (exit 64), never "node: bad option"', async () => {
    const result = await launch('--mesh', 'linkerd');
    expect(result.stderr).not.toMatch(/node: bad option/);
    expect(result.stderr).toMatch(/^interlock: /m);
    expect(result.code).toBe(64);
  });

  it("node's own options given by the user are the CLI's words too", async () => {
    const result = await launch('--max-old-space-size=1', 'version');
    expect(result.stderr).not.toMatch(/snapshot|bad option/i);
    expect(result.stderr).toMatch(/^interlock: /m);
  });

  it('commands still run as before', async () => {
    expect((await launch('version')).stdout.split('\n')[0]).toBe(`interlock ${VERSION}`);
  });
});
