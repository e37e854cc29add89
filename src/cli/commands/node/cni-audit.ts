import type { CniAuditOptions } from '../../../cni/run-cni-audit.js';
import { watchCniConfig } from '../../../cni/watch-cni-config.js';
import type { CniAuditSource, CniAuditVerdict } from '../../../node-agent/cni-audit-source.js';
import type { Result } from '../../../reason/result.js';
import type { CniVerdict } from '../../../cni/audit-cni.js';
import type { RuntimeInfoClient } from '../../../node-agent/cri/cri-client.js';
import type { ClusterAccess } from '../../../kube/cluster-access.js';
import { getNetworkAttachmentDefinition } from '../../../kube/network-attachment-definitions.js';
import { listAllPods } from '../../../kube/watch-pods.js';
import type { DefinitionRead } from '../../../cni/attachment-definition.js';
import type { MultusApiReader } from '../../../cni/multus-api-view.js';

/** A CRI Status answer is immediate on a sane node; the audit must not wait on a stuck one. */
const CRI_STATUS_TIMEOUT_MS = 5000;

/**
 * The audit also asks the runtime over the agent's CRI client (its socket is mounted) what it
 * loaded, and reports where that and its prediction disagree. The agent's directories stay the
 * mounted ones: only the comparison, never the runtime's host paths, is taken from the answer
 * (a directory the DaemonSet does not mount cannot be read in it). The runtime's default socket
 * unanswered is a warning, as in cni-check; one named with --cri-endpoint, an error.
 */
export function auditAskingRuntime(
  options: CniAuditOptions,
  runtime: RuntimeInfoClient | undefined,
  socket: { readonly path: string; readonly named: boolean } | undefined,
): CniAuditOptions {
  if (!runtime || socket === undefined) return options;
  return {
    ...options,
    runtimeQuestion: {
      sockets: [socket.path],
      asked: socket.named ? 'named' : 'default',
      ask: () => runtime.statusInfo(CRI_STATUS_TIMEOUT_MS),
    },
  };
}

/** Each API read of the audit has this long: the audit runs every 30 s and must not pile up. */
const API_TIMEOUT_MS = 10_000;

/**
 * The audit's API reads for Multus (the agent's credentials): one definition by name, and the
 * pods bound to this node, listed as the agent's own watch lists them.
 */
export function multusApiReader(access: ClusterAccess, node: string): MultusApiReader {
  return {
    definition: async (namespace, name): Promise<DefinitionRead> => {
      const read = await getNetworkAttachmentDefinition(access, namespace, name, API_TIMEOUT_MS);
      if (!read.ok) return { state: 'unreadable', message: read.error.message };
      return read.value ? { state: 'found', definition: read.value } : { state: 'absent' };
    },
    podsOnNode: async () => {
      const listed = await listAllPods(access, {
        fieldSelector: `spec.nodeName=${node}`,
        pageSize: 500,
        requestTimeoutMs: API_TIMEOUT_MS,
        watchTimeoutSeconds: 0,
        idleMs: 0,
      });
      return listed.ok ? { ok: true, pods: listed.value.items } : { ok: false, message: listed.error.message };
    },
  };
}

/**
 * cni-check's directory watch as the node agent's audit source: file-system events plus a
 * periodic re-check, delivering a verdict only when it changes. Wired here, in the composition
 * root, because the agent and the audit are peers that do not know each other.
 */
export function cniWatchSource(options: CniAuditOptions, intervalMs = 30_000): CniAuditSource {
  return {
    subscribe(onVerdict) {
      const watch = watchCniConfig({ ...options, intervalMs }, (verdict) => onVerdict(auditVerdictOf(verdict)));
      return () => watch.close();
    },
  };
}

/**
 * An unreadable directory is an unhealthy node, never a silent healthy one; a healthy verdict the
 * runtime did not confirm says so (the node condition's True message carries it).
 */
function auditVerdictOf(verdict: Result<CniVerdict>): CniAuditVerdict {
  if (!verdict.ok) return { healthy: false, message: verdict.error.message };
  if (verdict.value.healthy) {
    const unconfirmed = verdict.value.findings.find((finding) => finding.code === 'RuntimeUnobserved');
    const note = unconfirmed ? `, as predicted only: ${unconfirmed.message}` : '';
    return { healthy: true, message: `${verdict.value.dir} is healthy${note}` };
  }
  const errors = verdict.value.findings.filter((finding) => finding.severity === 'error');
  return {
    healthy: false,
    message: (errors[0] ?? verdict.value.findings[0])?.message ?? `${verdict.value.dir} is not healthy`,
  };
}
