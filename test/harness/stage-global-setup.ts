import { existsSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { stageRuntime } from '../../scripts/stage-runtime.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The world-readable copy of dist/ and its runtime dependencies, '' when nothing is built. */
    interlockStage: string;
  }
}

/**
 * One staged runtime per test run, removed when the run ends. Unit tests need no build, so a
 * tree without dist/ stages nothing and only the namespace tests (which need it) fail, saying why.
 */
export default function setup(project: TestProject): () => void {
  const built = existsSync(resolve(import.meta.dirname, '../../dist/cli/main.js'));
  const stage = built ? stageRuntime() : '';
  project.provide('interlockStage', stage);
  return () => {
    if (stage) rmSync(stage, { recursive: true, force: true });
  };
}
