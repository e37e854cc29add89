import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../scripts/cluster.sh', import.meta.url));

/**
 * The `cluster` project's one cluster: `npm run cluster` before the first file (it builds once
 * into its cache, then starts in under a minute), `npm run cluster:down` after the last, so the
 * run leaves no process, mount, namespace or file. INTERLOCK_CLUSTER_KEEP=1 keeps it up to look at.
 */
export function setup(): () => void {
  execFileSync('bash', [SCRIPT, 'up'], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 1_800_000 });
  return () => {
    if (process.env['INTERLOCK_CLUSTER_KEEP'] === '1') return;
    execFileSync('bash', [SCRIPT, 'down'], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 120_000 });
  };
}
