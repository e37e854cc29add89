import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Prometheus's own PromQL engine (tools/promql): scripts/ensure-promql.sh builds its script runner
 * once per machine (scripts/test.sh does before the tests) and prints its path, as
 * scripts/ensure-helm.sh does for the chart's tests.
 */
const repo = join(import.meta.dirname, '../..');
let binary: string | undefined;

/** The runner's path, built first if this machine has none (minutes cold: call it with a long timeout). */
export function promqlRunner(): string {
  binary ??= execFileSync('bash', [join(repo, 'scripts/ensure-promql.sh')], { encoding: 'utf8' }).trim();
  return binary;
}

export interface ScriptOutcome {
  readonly passed: boolean;
  /** The engine's own report: on a failure, the script's line and what it returned instead. */
  readonly output: string;
}

/** Runs promqltest scripts (`load` / `eval instant at` lines), by file name, as one directory given to the runner. */
export function runPromqlScripts(scripts: Readonly<Record<string, string>>): ScriptOutcome {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-promql-'));
  try {
    for (const [name, script] of Object.entries(scripts)) writeFileSync(join(dir, name), script);
    const run = spawnSync(promqlRunner(), ['-scripts', dir], { encoding: 'utf8', timeout: 30_000 });
    return { passed: run.status === 0, output: `${run.stdout}${run.stderr}${run.error?.message ?? ''}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs one promqltest script through the engine. */
export const runPromqlScript = (script: string): ScriptOutcome => runPromqlScripts({ 'alert.promql': script });
