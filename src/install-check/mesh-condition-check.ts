import { MESH_CONDITION } from '../node-agent/node-gate.js';
import { at, list, text } from './json-path.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import type { InstallSnapshot } from './install-snapshot.js';
import { unreadable } from './webhook-checks.js';

/** `interlock.dev/MeshCNIReady` on each node, as the agents report it (`--report-condition`). */
export function meshConditionCheck(snapshot: Pick<InstallSnapshot, 'nodes'>): InstallCheckResult {
  if (snapshot.nodes.state !== 'found') return unreadable('node-agent', 'condition', 'the nodes', snapshot.nodes);
  const rows = list(at(snapshot.nodes.value, 'items')).map((node) => {
    const name = text(at(node, 'metadata', 'name')) ?? '';
    const condition = list(at(node, 'status', 'conditions')).find((item) => at(item, 'type') === MESH_CONDITION);
    const status = text(at(condition, 'status'));
    return {
      name,
      status,
      line: status ? `${name} ${status} (${text(at(condition, 'reason')) ?? ''})` : `${name} not reported`,
    };
  });
  const ready = rows.filter((row) => row.status === 'True');
  if (rows.length === 0) return installCheck('node-agent', 'condition', 'warn', 'the cluster lists no node');
  const bad = rows.filter((row) => row.status !== 'True');
  const shown = [...bad, ...ready].slice(0, 10).map((row) => row.line);
  const more = rows.length > 10 ? ` and ${rows.length - 10} more` : '';
  const message = `${MESH_CONDITION}: ${shown.join(', ')}${more}`;
  if (bad.length === 0) return installCheck('node-agent', 'condition', 'pass', message);
  return installCheck(
    'node-agent',
    'condition',
    'fail',
    message,
    `kubectl describe node ${bad
      .slice(0, 10)
      .map((row) => row.name)
      .join(' ')}  # the condition's message names the cause; the agent's Events say more`,
  );
}
