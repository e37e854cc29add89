import type { CniFinding } from './cni-finding.js';
import { loadConfigFile } from './config-file.js';
import { containerdLoad } from './containerd-model.js';
import { crioLoad } from './crio-model.js';
import { chainFindings } from './chain-findings.js';
import { leftoverFindings } from './leftover-findings.js';
import { primaryFindings } from './primary-findings.js';
import type { CniAuditInput } from './cni-audit-input.js';
import { RUNTIME_LABEL, type RuntimeLoad, type RuntimeName } from './runtime-load.js';

export type { CniAuditInput };

/** The network the runtime gives pods, as the verdict reports it. */
export interface WinningNetwork {
  readonly file: string;
  readonly networkName: string;
  readonly cniVersion: string;
  readonly chain: readonly string[];
  readonly ifName: string;
  readonly wrapped: boolean;
}

export interface CniVerdict {
  readonly healthy: boolean;
  readonly runtime: RuntimeName;
  readonly dir: string;
  readonly meshPlugin: string;
  readonly candidates: readonly string[];
  readonly loads?: WinningNetwork;
  /** Where Multus (the file the runtime loads) sends the pods' primary network. */
  readonly delegate?: { readonly file: string; readonly chain: readonly string[] };
  /** The mesh plugin's own network attachment in Multus's directory (not chained). */
  readonly attachment?: string;
  readonly findings: readonly CniFinding[];
  /** What containerd said it loaded, when the audit asked it over the CRI. */
  readonly observed?: {
    readonly confDir: string;
    readonly pluginDirs: readonly string[];
    readonly lastLoadStatus: string;
    /** No RuntimeDisagrees, RuntimeLoadFailed finding: the runtime holds what the audit predicts. */
    readonly agrees: boolean;
    readonly network?: { readonly name: string; readonly chain: readonly string[] };
  };
}

/** What the runtime does with the directory, as a pure function of what is in it. */
function runtimeLoadOf(input: CniAuditInput): RuntimeLoad {
  if (input.runtime === 'crio')
    return crioLoad(input.listing, input.inventory, {
      binDirs: input.binDirs,
      ...(input.crioDefaultNetwork === undefined ? {} : { defaultNetwork: input.crioDefaultNetwork }),
    });
  return containerdLoad(input.listing, { ...(input.maxConfNum === undefined ? {} : { maxConfNum: input.maxConfNum }) });
}

/** The plugin types of every chain the audit judges: loaded, delegated to by Multus, attached. */
export function judgedPluginTypes(input: CniAuditInput): Set<string> {
  const types = new Set<string>();
  const load = runtimeLoadOf(input);
  if (!load.ok) return types;
  const primary = primaryFindings(input, load, load.networks[0]);
  const chains = [...load.networks, ...(primary.delegate ? [primary.delegate] : [])];
  for (const network of chains) for (const plugin of network.list.plugins) types.add(plugin.type);
  if (primary.attachment !== undefined) types.add(input.meshPlugin);
  return types;
}

/**
 * The audit: which file the runtime loads, and whether pods that land on this node will be set
 * up by the primary plugin and then by the mesh plugin. Healthy only when no finding is an error.
 */
export function auditCni(input: CniAuditInput): CniVerdict {
  const load = runtimeLoadOf(input);
  const base = {
    runtime: input.runtime,
    dir: input.listing.dir,
    meshPlugin: input.meshPlugin,
    candidates: load.candidates,
  };
  const findings: CniFinding[] = [...partialFindings(input, load)];
  if (!load.ok) {
    findings.push(loadFailureFinding(input, load));
    findings.push(...leftoverFindings(input, load));
    return { ...base, healthy: false, findings: dedupe(findings) };
  }
  const [network] = load.networks;
  const primary = primaryFindings(input, load, network);
  findings.push(...primary.findings);
  for (const loaded of load.networks) findings.push(...chainFindings(input, loaded));
  findings.push(...leftoverFindings(input, load));
  for (const skipped of load.passedOver) {
    if (skipped.problem !== 'partial')
      findings.push({
        code: 'PassedOver',
        severity: 'warning',
        file: skipped.file,
        message: `CRI-O skips ${skipped.file} (it logs the error and goes on to the next file): it ${skipped.message.slice(skipped.file.length + 1)}`,
      });
  }
  const loads: WinningNetwork = {
    file: network.file,
    networkName: network.list.name,
    cniVersion: network.list.cniVersion,
    chain: network.list.plugins.map((plugin) => plugin.type),
    ifName: network.ifName,
    wrapped: network.wrapped,
  };
  const unique = dedupe(findings);
  return {
    ...base,
    healthy: !unique.some((finding) => finding.severity === 'error'),
    loads,
    ...(primary.delegate
      ? { delegate: { file: primary.delegate.file, chain: primary.delegate.list.plugins.map((plugin) => plugin.type) } }
      : {}),
    ...(primary.attachment === undefined ? {} : { attachment: primary.attachment }),
    findings: unique,
  };
}

function loadFailureFinding(input: CniAuditInput, load: Extract<RuntimeLoad, { ok: false }>): CniFinding {
  const runtime = RUNTIME_LABEL[input.runtime];
  const failure = load.error;
  const consequence = 'it sets up no pod network: every new pod on this node fails at sandbox creation';
  if (failure.kind === 'no-config')
    return {
      code: 'NoConfig',
      severity: 'error',
      message: `${runtime} finds ${failure.message}: ${consequence} ("cni plugin not initialized")`,
    };
  if (failure.kind === 'default-missing')
    return {
      code: 'DefaultNetworkMissing',
      severity: 'error',
      message: `CRI-O finds ${failure.message}: ${consequence}`,
    };
  if (failure.kind === 'no-valid-network')
    return {
      code: 'LoadFails',
      severity: 'error',
      message: `CRI-O skips every file (${load.passedOver.map((skipped) => skipped.message).join('; ')}): ${consequence}`,
    };
  const file = failure.file ?? '';
  if (failure.kind === 'partial') {
    return {
      code: 'PartialFile',
      severity: 'error',
      file,
      message: `${failure.message} still after ${input.reads ?? 1} read(s); ${runtime} reads it first and fails to load it ("unexpected end of JSON input"): until it is complete ${consequence}`,
    };
  }
  return {
    code: 'LoadFails',
    severity: 'error',
    file,
    message: `${runtime} reads ${file} first (it sorts first of ${load.candidates.length}) and cannot load it: ${failure.message.replace(/^\S+ /, '')}; ${runtime} reports "cni config load failed" and ${consequence}`,
  };
}

/** Partial files the runtime skips (CRI-O) or never reads: the answer may change once they are written. */
function partialFindings(input: CniAuditInput, load: RuntimeLoad): CniFinding[] {
  if (!load.ok) return [];
  const winnerIndex = load.candidates.indexOf(load.networks[0].file);
  const findings: CniFinding[] = [];
  for (const [index, name] of load.candidates.entries()) {
    const entry = input.listing.entries.find((item) => item.name === name);
    if (!entry) continue;
    const parsed = loadConfigFile(entry, input.runtime === 'crio' ? '1.3' : '1.1');
    if (parsed.ok || parsed.error.kind !== 'partial') continue;
    const before = index < winnerIndex;
    findings.push({
      code: 'PartialFile',
      severity: before ? 'error' : 'warning',
      file: name,
      message: before
        ? `${name} ${parsed.error.message} still after ${input.reads ?? 1} read(s) and sorts before ${load.networks[0].file}: ${RUNTIME_LABEL[input.runtime]} skips it now, and loads it instead once it is complete: the answer is not settled`
        : `${name} ${parsed.error.message}; it sorts after ${load.networks[0].file}, so ${RUNTIME_LABEL[input.runtime]} does not load it while that file is there`,
    });
  }
  return findings;
}

function dedupe(findings: readonly CniFinding[]): CniFinding[] {
  const seen = new Set<string>();
  return findings.filter((finding) => !seen.has(finding.message) && seen.add(finding.message) !== undefined);
}
