import type { CniAuditInput } from './cni-audit-input.js';
import type { CniFinding } from './cni-finding.js';
import { loadConfigFile } from './config-file.js';
import { RUNTIME_LABEL, type LoadedNetwork, type RuntimeLoad } from './runtime-load.js';

/**
 * The mesh plugin must be in the default network's chain, after the primary plugin that gives
 * the pod its interface and address. linkerd2#2219: a standalone mesh file that sorts first
 * (scenario 2) leaves pods with no address; a winning file without the mesh plugin (scenario 3)
 * leaves them unmeshed.
 */
export function meshFindings(
  input: CniAuditInput,
  load: Extract<RuntimeLoad, { ok: true }>,
  network: LoadedNetwork,
  /** Who gives pods this chain, when it is not the file the runtime loads (Multus's delegate). */
  via?: string,
): CniFinding[] {
  const runtime = RUNTIME_LABEL[input.runtime];
  const chain = network.list.plugins.map((plugin) => plugin.type);
  const position = chain.indexOf(input.meshPlugin);
  const elsewhere = filesWithMesh(input, network.file);
  const loads = via ?? `${runtime} loads ${network.file}${sortNote(load, network.file, elsewhere[0])}`;
  const shown = `[${chain.join(', ')}]`;
  if (position < 0) {
    const where =
      elsewhere.length > 0
        ? ` ${input.meshPlugin} is only in ${elsewhere.join(', ')}, which ${runtime} does not load.`
        : '';
    return [
      {
        code: 'MeshMissing',
        severity: 'error',
        file: network.file,
        message: `${loads}, whose chain ${shown} has no ${input.meshPlugin}: pods on this node start without the mesh's rules (unmeshed; the init container fails them with InterceptionMissing).${where}`,
      },
    ];
  }
  if (position === 0) {
    const noIpam = network.list.plugins.every((plugin) => plugin.ipamType === '');
    const effect = noIpam
      ? 'which has no IPAM: pods on this node get no address'
      : `where ${input.meshPlugin} runs before any primary plugin has set up the pod's interface: pods on this node get no working network`;
    return [
      {
        code: 'MeshFirst',
        severity: 'error',
        file: network.file,
        message: `${loads}, whose chain ${shown} starts with the mesh plugin, ${effect}`,
      },
    ];
  }
  return [];
}

/** Other counted files whose chain holds the mesh plugin after another plugin. */
function filesWithMesh(input: CniAuditInput, winner: string): string[] {
  const libcni = input.runtime === 'crio' ? '1.3' : '1.1';
  return input.listing.entries
    .filter((entry) => entry.name !== winner)
    .filter((entry) => {
      const load = loadConfigFile(entry, libcni, input.listing.subdirectories);
      return load.ok && load.list.plugins.findIndex((plugin) => plugin.type === input.meshPlugin) > 0;
    })
    .map((entry) => entry.name);
}

/** "(it sorts before X)": why this file wins over the one the operator probably meant. */
function sortNote(load: Extract<RuntimeLoad, { ok: true }>, winner: string, intended: string | undefined): string {
  const winnerIndex = load.candidates.indexOf(winner);
  const other = intended ?? load.candidates[winnerIndex + 1];
  if (other === undefined) return '';
  const otherIndex = load.candidates.indexOf(other);
  return otherIndex > winnerIndex ? ` (it sorts before ${other})` : '';
}
