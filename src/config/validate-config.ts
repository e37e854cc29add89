import type { Family, IpAddress } from '../addr/ip.js';
import { failureCodesText } from '../mesh/meshes.js';
import { ok } from '../reason/result.js';
import { buildInterceptionSpec, explicitFields } from './build-interception.js';
import { HELP_FLAG, VERSION_FLAG } from './command-flags.js';
import type { ConfigResult } from './config-error.js';
import { envOf, valueFlag, type DefaultedFlag, type FlagDef } from './flag-def.js';
import {
  oneOf,
  parseAddressPerFamily,
  parseBoolean,
  parseDuration,
  parseFailureExitCode,
  parsePath,
  parsePort,
} from './flag-parsers.js';
import { formatDuration } from './duration.js';
import { PRESETS, type InterceptionSpec } from './interception.js';
import { INTERCEPTION_FLAGS, ISTIO_CNI_VERSION_FLAG } from './interception-flags.js';
import { ambientAnnotationsRead } from '../mesh/istio-ambient.js';
import { flagValue, type ParsedFlags } from './parsed-flags.js';
import { applyPodMetadata, type PodMetadata } from './pod-metadata.js';

export type FamilyMode = 'auto' | 'ipv4' | 'ipv6' | 'dual';
export type RulesMode = 'auto' | 'required' | 'off';
export type LogFormat = 'json' | 'plain';
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export interface ValidateConfig {
  readonly interception: InterceptionSpec;
  readonly family: FamilyMode;
  readonly timeoutMs: number;
  readonly failureExitCode: number;
  readonly terminationLog: string;
  readonly logFormat: LogFormat;
  readonly logLevel: LogLevel;
  /** Operator-chosen probe destinations, at most one per family; otherwise chosen from the routes. */
  readonly probeAddresses: Partial<Record<Family, IpAddress>>;
  /**
   * Soft preferences for the probe destination, one per family: used when routed and captured,
   * otherwise the plan chooses from the routes (Linkerd's --connect-addr maps here).
   */
  readonly probeAddressHints: Partial<Record<Family, IpAddress>>;
  /** Destination port of the probe; undefined means the first port the spec must redirect. */
  readonly probePort: number | undefined;
  readonly rules: RulesMode;
  /** On failure, post a Warning Event on the pod (never changes the verdict). */
  readonly reportEvent: boolean;
  /**
   * The outbound exclusions are all known (by flag, by the mesh's argv, or from the pod's
   * annotations): only then may the probe spread beyond the port the mesh guarantees.
   */
  readonly probeSpread: boolean;
  /** Why the probe spreads or not, for the log. */
  readonly probeSpreadWhy: string;
}

export const FAMILY_FLAG = valueFlag(
  'family',
  'auto|ipv4|ipv6|dual',
  'Families to prove (validate) or check (explain): auto = every family the pod has (explain: the rules cover); dual = both.',
  oneOf<FamilyMode>(['auto', 'ipv4', 'ipv6', 'dual']),
  { default: 'auto' },
);
const TIMEOUT_FLAG = valueFlag(
  'timeout',
  'DURATION',
  'Deadline for everything: `10s`, `500ms`, `1m30s` (default {default}, 100ms to 1h).',
  parseDuration(100, 3_600_000),
  { default: 10_000, showDefault: formatDuration },
);
export const FAILURE_EXIT_CODE_FLAG = valueFlag<number>(
  'failure-exit-code',
  'CODE',
  `Exit code of a failed validation (${failureCodesText()}); never a reserved code.`,
  parseFailureExitCode,
  {},
);
export const TERMINATION_LOG_FLAG = valueFlag(
  'termination-log',
  'PATH',
  'Where the termination message goes (default `{default}`); a regular file, never through a symlink.',
  parsePath,
  { default: '/dev/termination-log' },
);
const LOG_FORMAT_FLAG = valueFlag(
  'log-format',
  'json|plain',
  'Log format (default {default}).',
  oneOf<LogFormat>(['json', 'plain']),
  { default: 'json' },
);
const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
export const LOG_LEVEL_FLAG = valueFlag('log-level', 'LEVEL', '{default}.', oneOf<LogLevel>(LOG_LEVELS), {
  default: 'info',
  choices: LOG_LEVELS,
  // Every level, the default marked where it stands in the list.
  showDefault: (level: LogLevel) => LOG_LEVELS.map((each) => (each === level ? `${each} (default)` : each)).join(', '),
});
const PROBE_ADDRESS_FLAG = valueFlag(
  'probe-address',
  'ADDR[,ADDR]',
  'Probe destination, one per family (default: chosen from the routes).',
  parseAddressPerFamily,
);
const PROBE_ADDRESS_HINT_FLAG = valueFlag(
  'probe-address-hint',
  'ADDR[,ADDR]',
  "Fallback probe destination, one per family, used when no documentation range is routed and it is routed and captured (Linkerd's `--connect-addr`).",
  parseAddressPerFamily,
);
const PROBE_PORT_FLAG = valueFlag<number>(
  'probe-port',
  'PORT',
  'Probe destination port (default 20001, or an included port).',
  parsePort,
);
const RULES_FLAG = valueFlag(
  'rules',
  'auto|required|off',
  'Inspect the NAT rules when capable (default), always, or never.',
  oneOf<RulesMode>(['auto', 'required', 'off']),
  { default: 'auto' },
);

export const POD_ANNOTATIONS_FLAG = valueFlag<string>(
  'pod-annotations',
  'PATH',
  "The pod's annotations as a downward-API file (metadata.annotations), read at run time: the mesh's CNI annotations (skip/exclude ports, CIDRs, uid) apply as its plugin applies them, and only with known exclusions does the probe spread beyond the mesh's guaranteed port.",
  parsePath,
);
export const POD_LABELS_FLAG = valueFlag<string>(
  'pod-labels',
  'PATH',
  "The pod's labels as a downward-API file (metadata.labels): Linkerd control-plane pods skip the API server's ports.",
  parsePath,
);

export const REPORT_EVENT_FLAG: DefaultedFlag<boolean> = {
  name: 'report-event',
  kind: 'switch',
  env: envOf('report-event'),
  parse: parseBoolean,
  default: false,
  help: 'validate: on failure, post a Warning Event on the pod (POD_NAME, POD_NAMESPACE, POD_UID; at most 1 s; never changes the verdict); manifest/inject: turn it on and add its RBAC. See docs/operator.md.',
};

export const VALIDATE_FLAGS: readonly FlagDef[] = [
  ...INTERCEPTION_FLAGS,
  FAMILY_FLAG,
  TIMEOUT_FLAG,
  FAILURE_EXIT_CODE_FLAG,
  TERMINATION_LOG_FLAG,
  LOG_FORMAT_FLAG,
  LOG_LEVEL_FLAG,
  PROBE_ADDRESS_FLAG,
  PROBE_ADDRESS_HINT_FLAG,
  PROBE_PORT_FLAG,
  RULES_FLAG,
  POD_ANNOTATIONS_FLAG,
  POD_LABELS_FLAG,
  REPORT_EVENT_FLAG,
  HELP_FLAG,
  VERSION_FLAG,
] as readonly FlagDef[];

/** The validate configuration from a parsed command line: the preset, then every flag given. */
export function buildValidateConfig(
  parsed: ParsedFlags,
  metadata: PodMetadata = { annotations: undefined, labels: undefined },
): ConfigResult<ValidateConfig> {
  const interception = buildInterceptionSpec(parsed);
  if (!interception.ok) return interception;
  const withMetadata = applyPodMetadata(
    interception.value,
    metadata,
    explicitFields(parsed),
    ambientAnnotationsRead(flagValue(parsed, ISTIO_CNI_VERSION_FLAG)),
  );
  const spec = withMetadata.spec;
  return ok({
    interception: spec,
    family: flagValue(parsed, FAMILY_FLAG),
    timeoutMs: flagValue(parsed, TIMEOUT_FLAG),
    failureExitCode: flagValue(parsed, FAILURE_EXIT_CODE_FLAG) ?? PRESETS[spec.mesh].failureExitCode,
    terminationLog: flagValue(parsed, TERMINATION_LOG_FLAG),
    logFormat: flagValue(parsed, LOG_FORMAT_FLAG),
    logLevel: flagValue(parsed, LOG_LEVEL_FLAG),
    probeAddresses: flagValue(parsed, PROBE_ADDRESS_FLAG) ?? {},
    probeAddressHints: flagValue(parsed, PROBE_ADDRESS_HINT_FLAG) ?? {},
    probePort: flagValue(parsed, PROBE_PORT_FLAG),
    rules: flagValue(parsed, RULES_FLAG),
    reportEvent: flagValue(parsed, REPORT_EVENT_FLAG),
    probeSpread: withMetadata.exclusionsKnown,
    probeSpreadWhy: withMetadata.why,
  });
}
