import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/**
 * The V8 heap cap is declared once (scripts/node-runtime-flags.json); the snapshot is built with it
 * and refuses to start without it, so only the npm bin's shebang repeats it, and must match.
 */
describe('the node runtime flags', () => {
  const flags = JSON.parse(read('scripts/node-runtime-flags.json')) as string[];

  it('cap the old space low enough that one analysis stays under 256 MiB of RSS', () => {
    const cap = flags.map((flag) => /^--max-old-space-size=(\d+)$/.exec(flag)?.[1]).find(Boolean);
    expect(Number(cap)).toBeGreaterThan(128);
    expect(Number(cap)).toBeLessThanOrEqual(192);
  });

  it('cap the young generation: its semi-spaces, not the live heap, made a hostile analysis outgrow 128 MiB', () => {
    // Measured on a 20,000-rule hostile table: peak RSS 157 MB at the default semi-space, 120 MB at 2 MiB.
    const semi = flags.map((flag) => /^--max-semi-space-size=(\d+)$/.exec(flag)?.[1]).find(Boolean);
    expect(Number(semi)).toBeGreaterThan(0);
    expect(Number(semi)).toBeLessThanOrEqual(2);
  });

  it('are the npm bin shebang flags, so the bin and the image run alike', () => {
    const shebang = read('src/cli/main.ts').split('\n')[0] ?? '';
    expect(shebang).toBe(`#!/usr/bin/env -S node ${flags.join(' ')}`);
  });

  it('are what the image launcher and the snapshot build pass', () => {
    expect(read('scripts/build-snapshot.mjs')).toContain("'scripts/node-runtime-flags.json'");
    expect(read('image/launcher.mjs')).toContain('node ${nodeFlags} --snapshot-blob');
    expect(read('image/Dockerfile')).toContain('scripts/node-runtime-flags.json');
  });
});
