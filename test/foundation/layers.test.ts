import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const depcruise = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop() ?? '', { recursive: true, force: true });
});

/** Runs the repository's layer rules on a tree of planted modules: path -> source. */
function cruise(files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'interlock-layers-'));
  dirs.push(dir);
  copyFileSync(path.join(root, '.dependency-cruiser.cjs'), path.join(dir, '.dependency-cruiser.cjs'));
  copyFileSync(path.join(root, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), source);
  }
  const run = spawnSync(process.execPath, [depcruise, 'src', '--config', '.dependency-cruiser.cjs'], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the layer rules (.dependency-cruiser.cjs, docs/ARCHITECTURE.md)', () => {
  it('pass on the repository itself', () => {
    const run = spawnSync(process.execPath, [depcruise, 'src', '--config', '.dependency-cruiser.cjs'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.status, run.stdout + run.stderr).toBe(0);
  });

  it('allow a folder to import a lower rank', () => {
    const run = cruise({
      'src/trace/a.ts': "import { x } from '../rules/b.js';\nexport const y = x;\n",
      'src/rules/b.ts': 'export const x = 1;\n',
    });
    expect(run.status, run.output).toBe(0);
  });

  it('refuse an import upwards: the rules model importing the tracer', () => {
    const run = cruise({
      'src/rules/a.ts': "import { x } from '../trace/b.js';\nexport const y = x;\n",
      'src/trace/b.ts': 'export const x = 1;\n',
    });
    expect(run.status).not.toBe(0);
    expect(run.output).toContain('layer-rules');
  });

  it('refuse a peer of the same rank, and the kube adapter importing the injection folder above it', () => {
    const peers = cruise({
      'src/config/a.ts': "import { x } from '../rules/b.js';\nexport const y = x;\n",
      'src/rules/b.ts': 'export const x = 1;\n',
    });
    expect(peers.output).toContain('layer-config');
    const kube = cruise({
      'src/kube/a.ts': "import { x } from '../inject/b.js';\nexport const y = x;\n",
      'src/inject/b.ts': 'export const x = 1;\n',
    });
    expect(kube.output).toContain('layer-kube');
  });

  it('refuse a folder the table does not rank, and a cycle inside a folder', () => {
    const unranked = cruise({
      'src/misc/a.ts': "import { x } from '../addr/b.js';\nexport const y = x;\n",
      'src/addr/b.ts': 'export const x = 1;\n',
    });
    expect(unranked.output).toContain('unranked-importer');
    const cycle = cruise({
      'src/addr/a.ts': "import { x } from './b.js';\nexport const y = x;\n",
      'src/addr/b.ts': "import { y } from './a.js';\nexport const x = 1;\nexport const z = y;\n",
    });
    expect(cycle.output).toContain('no-circular');
  });
});
