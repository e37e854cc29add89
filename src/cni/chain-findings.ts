import type { CniAuditInput } from './cni-audit-input.js';
import type { CniFinding, CniFindingCode } from './cni-finding.js';
import { networkNameProblem } from './conf-list.js';
import { pluginProblem, type PluginProblem } from './plugin-binary.js';
import { RUNTIME_LABEL, type LoadedNetwork } from './runtime-load.js';

const CODE: Readonly<Record<PluginProblem['kind'], CniFindingCode>> = {
  'invalid-name': 'PluginNameInvalid',
  missing: 'PluginMissing',
  'not-executable': 'PluginNotExecutable',
  'no-version-answer': 'VersionUnknown',
  'version-unsupported': 'VersionUnsupported',
};

/** What the runtime's ADD will hit in a loaded network: its name, each plugin's binary and version. */
export function chainFindings(input: CniAuditInput, network: LoadedNetwork): CniFinding[] {
  const runtime = RUNTIME_LABEL[input.runtime];
  const findings: CniFinding[] = [];
  const nameProblem = networkNameProblem(network.list.name);
  if (nameProblem) {
    findings.push({
      code: 'NetworkNameInvalid',
      severity: 'error',
      file: network.file,
      message: `${runtime} loads ${network.file}, but ${nameProblem}: every pod's network ADD fails and pods on this node get no sandbox`,
    });
  }
  for (const plugin of network.list.plugins) {
    const problem = pluginProblem(plugin.type, network.list.cniVersion, input.inventory, input.binDirs);
    if (!problem) continue;
    findings.push({
      code: CODE[problem.kind],
      severity: 'error',
      file: network.file,
      message: `${runtime} loads ${network.file}, but ${problem.message}: ${consequenceOf(problem, plugin.type, network.list.cniVersion)}`,
    });
  }
  return findings;
}

function consequenceOf(problem: PluginProblem, type: string, listVersion: string): string {
  switch (problem.kind) {
    case 'invalid-name':
    case 'missing':
      return `every pod's ADD fails at "${type}" ("failed to find plugin") and pods on this node get no sandbox`;
    case 'not-executable':
      return `every pod's ADD fails at "${type}" (permission denied) and pods on this node get no sandbox`;
    case 'no-version-answer':
      return `whether it accepts cniVersion ${listVersion || '(none)'} is unknown, so pods on this node may get no sandbox`;
    case 'version-unsupported':
      return `every pod's ADD fails at "${type}" ("incompatible CNI versions") and pods on this node get no sandbox`;
  }
}
