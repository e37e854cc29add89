import type { CniVerdict } from './audit-cni.js';
import { RUNTIME_LABEL } from './runtime-load.js';

/** The verdict for a person: the headline, what the runtime loads, then every finding. */
export function verdictText(verdict: CniVerdict): string {
  const runtime = RUNTIME_LABEL[verdict.runtime];
  const errors = verdict.findings.filter((finding) => finding.severity === 'error');
  const lines = [
    verdict.healthy
      ? `interlock cni-check: HEALTHY: ${runtime} loads ${healthyPath(verdict)}`
      : `interlock cni-check: UNHEALTHY: ${errors.length} problem(s) in ${verdict.dir} for ${runtime}`,
  ];
  if (verdict.loads) {
    const { loads } = verdict;
    lines.push(
      `loads: ${loads.file} (network "${loads.networkName}", cniVersion ${loads.cniVersion || '(none)'}, ${loads.ifName}${loads.wrapped ? ', a single plugin wrapped into a list' : ''}): ${loads.chain.join(' -> ')}`,
    );
  }
  if (verdict.delegate)
    lines.push(
      `multus delegates the primary network to: ${verdict.delegate.file}: ${verdict.delegate.chain.join(' -> ')}`,
    );
  if (verdict.attachment !== undefined)
    lines.push(`${verdict.meshPlugin} is a network attachment of its own: ${verdict.attachment}`);
  lines.push(`order: ${verdict.candidates.join(', ') || '(no configuration files)'}`);
  if (verdict.observed) lines.push(observedLine(verdict.observed));
  for (const finding of verdict.findings)
    lines.push(`${finding.severity === 'error' ? 'ERROR  ' : 'warning'} ${finding.code}: ${finding.message}`);
  return `${lines.join('\n')}\n`;
}

/** The verdict as data (the node agent and tests read this shape). */
export function verdictJson(verdict: CniVerdict, exitCode: number): string {
  return `${JSON.stringify({ ...verdict, exitCode }, null, 2)}\n`;
}

/** What a healthy node does with a pod: the chain, Multus's delegate, the mesh's own attachment. */
function healthyPath(verdict: CniVerdict): string {
  const chain = verdict.delegate ? verdict.delegate.chain : (verdict.loads?.chain ?? []);
  const where = verdict.delegate ? `, Multus's, which delegates to ${verdict.delegate.file},` : '';
  if (verdict.attachment !== undefined)
    return `${verdict.loads?.file}${where} and ${verdict.meshPlugin} runs as its own attachment (${verdict.attachment})`;
  return `${verdict.loads?.file}${where} and chains ${verdict.meshPlugin} after ${chain[0]}`;
}

/** What containerd answered over the CRI, beside the prediction. */
function observedLine(observed: NonNullable<CniVerdict['observed']>): string {
  const held = observed.network
    ? `network "${observed.network.name}": ${observed.network.chain.join(' -> ')}`
    : 'no pod network';
  return `containerd holds: ${held} (conf dir ${observed.confDir}, plugins in ${observed.pluginDirs.join(', ') || '(none)'}, last load ${observed.lastLoadStatus}): ${observed.agrees ? 'as predicted' : 'NOT as predicted'}`;
}
