import { dataPlaneChecks } from './data-plane-checks.js';
import { at, text } from './json-path.js';
import { nodeAgentChecks, nodeAgentInstalled } from './node-agent-checks.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import type { InstallSnapshot } from './install-snapshot.js';
import { versionChecks } from './version-checks.js';
import { webhookChecks, webhookInstalled } from './webhook-checks.js';

/** Every check, in the order they print; nothing is read here (the snapshot holds it all). */
export function judgeInstall(snapshot: InstallSnapshot): InstallCheckResult[] {
  const reached = snapshot.version;
  if (reached.state !== 'found') {
    const detail = reached.state === 'absent' ? 'GET /version answered 404' : reached.detail;
    return [
      installCheck(
        'cluster',
        'reachable',
        'fail',
        `cannot reach the API server ${snapshot.server} (${snapshot.origin}): ${detail}`,
        'kubectl cluster-info, with the same kubeconfig and context',
      ),
    ];
  }
  const version = text(at(reached.value, 'gitVersion')) ?? 'unknown version';
  const results = [
    installCheck(
      'cluster',
      'reachable',
      'pass',
      `reached ${snapshot.server}, Kubernetes ${version} (${snapshot.origin})`,
    ),
  ];
  if (!webhookInstalled(snapshot) && !nodeAgentInstalled(snapshot))
    results.push(
      installCheck(
        'cluster',
        'installed',
        'fail',
        `Interlock is not installed here: no webhook in ${snapshot.webhookNamespace}, no node agent in ${snapshot.nodeNamespace}`,
        'interlock manifest --webhook | kubectl apply -f -; interlock manifest --node-agent | kubectl apply -f - (docs/operator.md)',
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
