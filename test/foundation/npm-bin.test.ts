import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: { interlock: string } };
const BIN = join(ROOT, pkg.bin.interlock);
const shebangFlags = (): string[] =>
  (readFileSync(BIN, 'utf8').split('\n')[0] ?? '')
    .replace(/^#!.*\bnode\b/, '')
    .trim()
    .split(/\s+/);

/**
 * The npm bin is one bundle run through a launcher with a V8 code cache (scripts/build-bin.mjs).
 * Needs `npm run build`, like every test that runs the CLI.
 */
describe('the npm bin', () => {
  it('is the launcher, executable, with the heap cap of the node runtime flags in its shebang', () => {
    expect(pkg.bin.interlock).toBe('dist/bin/interlock.cjs');
    expect(statSync(BIN).mode & 0o111).toBe(0o111);
    const flags = JSON.parse(readFileSync(join(ROOT, 'scripts/node-runtime-flags.json'), 'utf8')) as string[];
    expect(shebangFlags()).toEqual(flags);
  });

  it('is packed with its bundle and code cache', () => {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' }),
    ) as [{ files: { path: string }[] }];
    const files = packed.files.map((file) => file.path);
    for (const file of [pkg.bin.interlock, 'dist/bin/interlock-bundle.cjs', 'dist/bin/interlock-bundle.code-cache'])
      expect(files).toContain(file);
  });

  it("gets its code cache accepted under its shebang's flags, and runs from it", () => {
    // Run as npm runs it (the shebang's flags); a cache V8 rejects would be compiled over silently.
    const probe = `const { compileBundle } = require(${JSON.stringify(BIN)}); process.stdout.write(String(compileBundle().cachedDataRejected));`;
    expect(execFileSync(process.execPath, [...shebangFlags(), '-e', probe], { encoding: 'utf8' })).toBe('false');
    const version = execFileSync(process.execPath, [...shebangFlags(), BIN, 'version'], { encoding: 'utf8' });
    expect(version).toMatch(/^interlock \d+\.\d+\.\d+\ncommit: [0-9a-f]{40}\n/);
  });

  it('keeps the netlink addon out of the bundle, loaded from node_modules where npm put it', () => {
    const bundle = readFileSync(join(ROOT, 'dist/bin/interlock-bundle.cjs'), 'utf8');
    expect(bundle).toContain('require("netlink/dist/raw.js")');
    expect(bundle).not.toContain('node-gyp-build');
  });
});
