import type { InstallCheckResult, InstallCheckStatus } from './install-check-result.js';
import type { InstallSnapshot } from './install-snapshot.js';

/** Where the checks ran: the cluster and the namespaces the report names. */
type ReportContext = Pick<InstallSnapshot, 'server' | 'origin' | 'webhookNamespace' | 'nodeNamespace'>;

const MARK: Record<InstallCheckStatus, string> = { pass: 'ok  ', warn: 'warn', fail: 'FAIL', skip: 'skip' };

/** A part's heading; each node agent (one per mesh) has its own, the checks of them all come last. */
function heading({ part, agent }: InstallCheckResult, snapshot: ReportContext): string {
  if (part === 'webhook') return `webhook (namespace ${snapshot.webhookNamespace})`;
  if (part === 'node-agent' && agent !== undefined) {
    const [namespace, name] = agent.split('/');
    return `node agent ${name} (namespace ${namespace})`;
  }
  if (part === 'node-agent') return 'node agents';
  if (part === 'preflight') return 'preflight (before an install)';
  if (part === 'data-plane') return 'data plane (meshed pods)';
  return part;
}

/** Text as `linkerd check` prints it, grouped by part, a fix under each failure; or one JSON object. */
export function renderChecks(
  snapshot: ReportContext,
  results: readonly InstallCheckResult[],
  format: 'text' | 'json',
): string {
  const tally = (status: InstallCheckStatus) => results.filter((result) => result.status === status).length;
  const summary = { passed: tally('pass'), warnings: tally('warn'), failed: tally('fail'), skipped: tally('skip') };
  if (format === 'json') {
    const { server: cluster, origin, webhookNamespace, nodeNamespace } = snapshot;
    const agents = [...new Set(results.flatMap((result) => result.agent ?? []))];
    const head = { cluster, origin, webhookNamespace, nodeNamespace, ...(agents.length > 0 ? { agents } : {}) };
    return `${JSON.stringify({ ...head, ...summary, checks: results }, null, 2)}\n`;
  }
  const lines: string[] = [];
  let group: string | undefined;
  for (const result of results) {
    if (`${result.part} ${result.agent ?? ''}` !== group) {
      group = `${result.part} ${result.agent ?? ''}`;
      lines.push(`${lines.length > 0 ? '\n' : ''}${heading(result, snapshot)}`);
    }
    lines.push(`  ${MARK[result.status]}  ${result.message}`);
    if (result.fix && result.status !== 'pass') lines.push(`        fix: ${result.fix}`);
  }
  const verdict = summary.failed > 0 ? `${summary.failed} failed` : 'all checks passed';
  lines.push(
    '',
    `${verdict}, ${summary.warnings} warning${summary.warnings === 1 ? '' : 's'}, ${summary.passed} passed, ${summary.skipped} skipped`,
  );
  return `${lines.join('\n')}\n`;
}
