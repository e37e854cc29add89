import type { Result } from '../reason/result.js';
import type { CniVerdict } from './audit-cni.js';
import { runtimeAgreement, type Prediction } from './runtime-agreement.js';
import { parseRuntimeCniConfig, type RuntimeCniConfig } from './runtime-cni-config.js';

/** The CRI port: containerd's verbose Status info map, or why it could not be had. */
export type RuntimeAsker = () => Promise<Result<ReadonlyMap<string, string>, string>>;

/** Which settings the operator left to the runtime: those are taken from its answer. */
export interface FollowRuntime {
  readonly confDir: boolean;
  readonly binDirs: boolean;
  readonly maxConfNum: boolean;
}

interface Followable {
  readonly confDir: string;
  readonly binDirs: readonly string[];
  readonly maxConfNum?: number;
  readonly followRuntime?: FollowRuntime;
}

/** containerd's answer, parsed; a failure keeps its sentence for the RuntimeUnobserved finding. */
export async function observeRuntime(ask: RuntimeAsker): Promise<Result<RuntimeCniConfig, string>> {
  const answer = await ask();
  return answer.ok ? parseRuntimeCniConfig(answer.value) : answer;
}

/** The runtime's own directories and max_conf_num where the operator named none. */
export function followed<T extends Followable>(options: T, held: RuntimeCniConfig): T {
  const follow = options.followRuntime;
  if (!follow) return options;
  return {
    ...options,
    ...(follow.confDir ? { confDir: held.confDir } : {}),
    ...(follow.binDirs ? { binDirs: held.pluginDirs } : {}),
    ...(follow.maxConfNum ? { maxConfNum: held.maxConfNum } : {}),
  };
}

/** The verdict with what the runtime said: its disagreements are findings, so they decide health too. */
export function withObservation(prediction: Prediction, observed: Result<RuntimeCniConfig, string>): CniVerdict {
  const { verdict } = prediction;
  const findings = observed.ok
    ? runtimeAgreement(prediction, observed.value)
    : [
        {
          code: 'RuntimeUnobserved' as const,
          severity: 'error' as const,
          message: `cannot compare the prediction with what containerd loaded: ${observed.error.message}`,
        },
      ];
  const all = [...verdict.findings, ...findings];
  return {
    ...verdict,
    healthy: !all.some((finding) => finding.severity === 'error'),
    findings: all,
    ...(observed.ok ? { observed: observedOf(observed.value, findings.length === 0) } : {}),
  };
}

function observedOf(held: RuntimeCniConfig, agrees: boolean): NonNullable<CniVerdict['observed']> {
  const network = held.networks[0];
  return {
    confDir: held.confDir,
    pluginDirs: held.pluginDirs,
    lastLoadStatus: held.lastLoadStatus,
    agrees,
    ...(network ? { network: { name: network.name, chain: network.chain } } : {}),
  };
}
