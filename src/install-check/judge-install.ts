import { notInstalledFix } from './not-installed-fix.js';
import { dataPlaneChecks } from './data-plane-checks.js';
import { preflightChecks } from './preflight-checks.js';
import type { PreflightSnapshot } from './preflight-snapshot.js';
import { at, text } from './json-path.js';
import { nodeAgentChecks, nodeAgentInstalled } from './node-agent-checks.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import type { InstallSnapshot } from './install-snapshot.js';
import { versionChecks } from './version-checks.js';
import { webhookChecks, webhookInstalled } from './webhook-checks.js';

/** Every check, in the order they print; nothing is read here (the snapshot holds it all). */
export function judgeInstall(snapshot: InstallSnapshot): InstallCheckResult[] {
  const results = [reachable(snapshot)];
  if (snapshot.version.state !== 'found') return results;
  if (!webhookInstalled(snapshot) && !nodeAgentInstalled(snapshot))
    results.push(
      installCheck(
        'cluster',
        'installed',
        'fail',
        `Interlock is not installed here: no webhook in ${snapshot.webhookNamespace}, no node agent ${snapshot.agentScope}`,
        notInstalledFix(snapshot),
      ),
    );
  return [
    ...results,
    ...webhookChecks(snapshot),
    ...nodeAgentChecks(snapshot),
    ...versionChecks(snapshot),
    ...dataPlaneChecks(snapshot),
  ];
}

/** Whether the API server answered, and which Kubernetes it is. */
function reachable(snapshot: Pick<InstallSnapshot, 'server' | 'origin' | 'version'>): InstallCheckResult {
  const reached = snapshot.version;
  if (reached.state !== 'found') {
    const detail = reached.state === 'absent' ? 'GET /version answered 404' : reached.detail;
    return installCheck(
      'cluster',
      'reachable',
      'fail',
      `cannot reach the API server ${snapshot.server} (${snapshot.origin}): ${detail}`,
      'kubectl cluster-info, with the same kubeconfig and context',
    );
  }
  const version = text(at(reached.value, 'gitVersion')) ?? 'unknown version';
  return installCheck(
    'cluster',
    'reachable',
    'pass',
    `reached ${snapshot.server}, Kubernetes ${version} (${snapshot.origin})`,
  );
}

/** `check --pre`: reachable, then what the install needs (unread when the cluster did not answer). */
export function judgePreflight(
  cluster: Pick<InstallSnapshot, 'server' | 'origin' | 'version'>,
  snapshot: PreflightSnapshot | undefined,
): InstallCheckResult[] {
  return [reachable(cluster), ...(snapshot ? preflightChecks(snapshot) : [])];
}
