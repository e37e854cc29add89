import { posix } from 'node:path';
import type { CniVerdict } from './audit-cni.js';
import type { CniFinding } from './cni-finding.js';
import { CRIO_STATUS_LACKS } from './crio-status.js';
import type { Result } from '../reason/result.js';
import { runtimeAgreement, type Prediction } from './runtime-agreement.js';
import type { RuntimeCniConfig } from './runtime-cni-config.js';
import { RUNTIME_LABEL } from './runtime-load.js';
import { parseRuntimeStatus, type RuntimeStatus } from './runtime-status.js';

/** The CRI port: a runtime's verbose Status info map over one socket, or why it could not be had. */
export type RuntimeAsker = (socket: string) => Promise<Result<ReadonlyMap<string, string>, string>>;

/** Whom the audit asks what the runtime loaded, before it predicts. */
export interface RuntimeQuestion {
  /** Tried in order; the first that answers is the node's runtime. */
  readonly sockets: readonly string[];
  readonly ask: RuntimeAsker;
  /**
   * `named`: a socket the operator (or the manifest) named, so no answer is an error; `default`:
   * the runtimes' default sockets, tried because none was named, so no answer falls back to the
   * guessed directories, said in a warning.
   */
  readonly asked: 'named' | 'default';
  /** Where the node's root is seen from here (`/host` in `kubectl debug node/...`): the runtime's paths are read under it. */
  readonly hostRoot?: string;
}

/** Which settings the operator left to the runtime: those are taken from its answer. */
export interface FollowRuntime {
  readonly confDir: boolean;
  readonly binDirs: boolean;
  readonly maxConfNum: boolean;
  /** No --runtime given: the runtime whose socket answered decides whose rules apply. */
  readonly runtime?: boolean;
}

/** What asking gave: a runtime's answer (known by its shape), an answer of no known shape, or silence. */
export type Observation =
  | { readonly kind: 'answered'; readonly socket: string; readonly status: RuntimeStatus }
  | { readonly kind: 'invalid'; readonly socket: string; readonly message: string }
  | {
      readonly kind: 'unanswered';
      readonly asked: RuntimeQuestion['asked'];
      readonly tries: ReadonlyArray<{ readonly socket: string; readonly message: string }>;
    };

interface Followable {
  readonly confDir: string;
  readonly binDirs: readonly string[];
  readonly runtime: RuntimeStatus['runtime'];
  readonly maxConfNum?: number;
  readonly followRuntime?: FollowRuntime;
}

/** Each socket in turn until one answers; an answer of no known shape ends the search (it is an error). */
export async function observeRuntime(question: RuntimeQuestion): Promise<Observation> {
  const tries: Array<{ socket: string; message: string }> = [];
  for (const socket of question.sockets) {
    const answer = await question.ask(socket);
    if (!answer.ok) {
      tries.push({ socket, message: answer.error.message });
      continue;
    }
    const status = parseRuntimeStatus(answer.value);
    if (!status.ok) return { kind: 'invalid', socket, message: status.error.message };
    return { kind: 'answered', socket, status: underRoot(status.value, question.hostRoot ?? '/') };
  }
  return { kind: 'unanswered', asked: question.asked, tries };
}

/** containerd's paths as this process sees them: under the host root when it runs in a debug pod. */
function underRoot(status: RuntimeStatus, hostRoot: string): RuntimeStatus {
  if (status.runtime !== 'containerd' || hostRoot === '/') return status;
  const at = (path: string) => posix.join(hostRoot, path);
  const { held } = status;
  return { runtime: 'containerd', held: { ...held, confDir: at(held.confDir), pluginDirs: held.pluginDirs.map(at) } };
}

/** The runtime that answered, and containerd's own directories and max_conf_num, where the operator named none. */
export function followed<T extends Followable>(options: T, observation: Observation): T {
  const follow = options.followRuntime;
  if (!follow || observation.kind !== 'answered') return options;
  const { status } = observation;
  const runtime = follow.runtime ? status.runtime : options.runtime;
  if (status.runtime !== 'containerd' || runtime !== 'containerd') return { ...options, runtime };
  const { held } = status;
  return {
    ...options,
    runtime,
    ...(follow.confDir ? { confDir: held.confDir } : {}),
    ...(follow.binDirs ? { binDirs: held.pluginDirs } : {}),
    ...(follow.maxConfNum ? { maxConfNum: held.maxConfNum } : {}),
  };
}

/** The verdict with what the runtime said: its disagreements are findings, so they decide health too. */
export function withObservation(prediction: Prediction, observation: Observation): CniVerdict {
  const { verdict } = prediction;
  const findings = observationFindings(prediction, observation);
  const all = [...verdict.findings, ...findings];
  const held =
    observation.kind === 'answered' && observation.status.runtime === 'containerd'
      ? observation.status.held
      : undefined;
  // Only containerd's answer gives `observed`, and then every finding is a disagreement.
  const agrees = findings.length === 0;
  return {
    ...verdict,
    healthy: !all.some((finding) => finding.severity === 'error'),
    findings: all,
    ...(held && verdict.runtime === 'containerd' ? { observed: observedOf(held, agrees) } : {}),
  };
}

function observationFindings(prediction: Prediction, observation: Observation): CniFinding[] {
  const { verdict } = prediction;
  const label = RUNTIME_LABEL[verdict.runtime];
  if (observation.kind === 'invalid')
    return [
      unobserved(
        'error',
        `cannot compare the prediction with what the runtime on ${observation.socket} loaded: ${observation.message}`,
      ),
    ];
  if (observation.kind === 'unanswered') {
    const tried = observation.tries.map((attempt) => attempt.message).join('; ');
    if (observation.asked === 'named')
      return [unobserved('error', `cannot compare the prediction with what ${label} loaded: ${tried}`)];
    const sockets = observation.tries.map((attempt) => `${attempt.socket} (${attempt.message})`).join(', ');
    return [
      unobserved(
        'warning',
        `no container runtime answered the CRI Status on ${sockets || 'no socket'}: the audit judged ${verdict.dir} with plugins in ${prediction.binDirs.join(', ')} as given or by default, not as the runtime reports them; name its socket with --cri-endpoint (in a debug pod, --host-root /host)`,
      ),
    ];
  }
  const { status, socket } = observation;
  if (status.runtime !== verdict.runtime)
    return [
      {
        code: 'RuntimeDisagrees',
        severity: 'error',
        message: `the runtime on ${socket} is ${RUNTIME_LABEL[status.runtime]}, but the audit applies ${label}'s rules (--runtime ${verdict.runtime}): the prediction is not about this node's runtime`,
      },
    ];
  if (status.runtime === 'containerd') return runtimeAgreement(prediction, status.held);
  return [
    unobserved(
      'warning',
      `CRI-O answered on ${socket}, but ${CRIO_STATUS_LACKS}: this verdict is the prediction alone, from ${verdict.dir} and ${prediction.binDirs.join(', ')} (--cni-conf-dir, --cni-bin-dir), not a comparison with what CRI-O loaded`,
    ),
  ];
}

function unobserved(severity: CniFinding['severity'], message: string): CniFinding {
  return { code: 'RuntimeUnobserved', severity, message };
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
