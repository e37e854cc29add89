import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../scripts/cluster.sh', import.meta.url));

/**
 * The `cluster` project's one cluster: `npm run cluster` before the first file (it builds once
 * into its cache, then starts in under a minute), `npm run cluster:down` after the last, so the
 * run leaves no process, mount, namespace or file. A cluster that was already running (someone's
 * `npm run cluster`) is reused and left running: the run removes only what it started.
 * INTERLOCK_CLUSTER_KEEP=1 keeps a cluster the run started up to look at.
 */
export function setup(): () => void {
  const wasRunning = spawnSync('bash', [SCRIPT, 'status'], { stdio: 'ignore' }).status === 0;
  execFileSync('bash', [SCRIPT, 'up'], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 1_800_000 });
  return () => {
    if (wasRunning || process.env['INTERLOCK_CLUSTER_KEEP'] === '1') return;
    execFileSync('bash', [SCRIPT, 'down'], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 120_000 });
  };
}
