import { parseIp, type Family, type IpAddress } from '../addr/ip.js';
import { configError, isConfigError, type ConfigError } from './config-error.js';
import { formatDuration, parseDurationMs } from './duration.js';
import { failureExitCodeOf } from './exit-codes.js';
import type { FlagSpec } from './flag-spec.js';
import { buildInterceptionSpec, INTERCEPTION_FLAGS, parsePort, type InterceptionSpec } from './interception.js';
import type { RawOptions } from './raw-options.js';

export type FamilyMode = 'auto' | 'ipv4' | 'ipv6' | 'dual';
export type RulesMode = 'auto' | 'required' | 'off';
export type LogFormat = 'json' | 'plain';
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

const FAMILY_MODES: readonly FamilyMode[] = ['auto', 'ipv4', 'ipv6', 'dual'];
const RULES_MODES: readonly RulesMode[] = ['auto', 'required', 'off'];
const LOG_FORMATS: readonly LogFormat[] = ['json', 'plain'];
const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

export const DEFAULT_PROBE_PORT = 20001;

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
  /** Preferred probe destinations (--probe-address-hint): used when routed and captured, else the plan chooses. */
  readonly probeAddressHints: Partial<Record<Family, IpAddress>>;
  /** Destination port of the probe; undefined means the first port the spec must redirect. */
  readonly probePort: number | undefined;
  readonly rules: RulesMode;
}

export const VALIDATE_FLAGS: readonly FlagSpec[] = [
  ...INTERCEPTION_FLAGS,
  { name: 'family', arity: 'value', placeholder: 'auto|ipv4|ipv6|dual', help: 'Families to prove: auto = every family the pod has an address in (default).' },
  { name: 'timeout', arity: 'value', placeholder: 'DURATION', help: 'Deadline for the whole validation, e.g. 10s, 500ms (default 10s).' },
  { name: 'failure-exit-code', arity: 'value', placeholder: 'CODE', help: 'Exit code of a failed validation (linkerd 95, istio 126, generic 97).' },
  { name: 'termination-log', arity: 'value', placeholder: 'PATH', help: 'Where the termination message goes (default /dev/termination-log).' },
  { name: 'log-format', arity: 'value', placeholder: 'json|plain', help: 'Log line format (default json).' },
  { name: 'log-level', arity: 'value', placeholder: 'LEVEL', help: 'trace|debug|info|warn|error|fatal|silent (default info).' },
  { name: 'probe-address', arity: 'value', placeholder: 'ADDR[,ADDR]', help: 'Probe destination(s), one per family; default: chosen from the pod routes.' },
  { name: 'probe-port', arity: 'value', placeholder: 'PORT', help: 'Probe destination port (default 20001, or the first port that must be redirected).' },
  { name: 'rules', arity: 'value', placeholder: 'auto|required|off', help: 'Inspect the NAT rules: auto when capable (default), required, or off.' },
  { name: 'help', arity: 'switch', help: 'Print this help and exit.' },
  { name: 'version', arity: 'switch', help: 'Print the version and exit.' },
];

export function buildValidateConfig(raw: RawOptions): ValidateConfig | ConfigError {
  const interception = buildInterceptionSpec(raw);
  if (isConfigError(interception)) return interception;

  const family = oneOf(raw, 'family', FAMILY_MODES, 'auto');
  if (isConfigError(family)) return family;
  const rules = oneOf(raw, 'rules', RULES_MODES, 'auto');
  if (isConfigError(rules)) return rules;
  const logFormat = oneOf(raw, 'log-format', LOG_FORMATS, 'json');
  if (isConfigError(logFormat)) return logFormat;
  const logLevel = oneOf(raw, 'log-level', LOG_LEVELS, 'info');
  if (isConfigError(logLevel)) return logLevel;

  const timeoutOption = raw.get('timeout');
  const timeoutMs = timeoutOption ? parseDurationMs(timeoutOption.value) : 10_000;
  if (timeoutMs === undefined || timeoutMs < 100 || timeoutMs > 3_600_000) {
    return configError(timeoutOption?.source ?? '--timeout', timeoutOption?.value ?? '', `expected a duration from 100ms to 1h, e.g. ${formatDuration(10_000)} or 500ms`);
  }

  const failureExitCode = failureExitCodeOf(raw, interception.mesh);
  if (isConfigError(failureExitCode)) return failureExitCode;

  const probeAddresses: Partial<Record<Family, IpAddress>> = {};
  const probeOption = raw.get('probe-address');
  if (probeOption) {
    for (const item of probeOption.value.split(',').map((text) => text.trim()).filter((text) => text !== '')) {
      const ip = parseIp(item);
      if (!ip) return configError(probeOption.source, probeOption.value, `"${item}" is not an IP address`);
      if (probeAddresses[ip.family]) return configError(probeOption.source, probeOption.value, `two ${ip.family} addresses given; one per family`);
      probeAddresses[ip.family] = ip;
    }
  }

  const probePortOption = raw.get('probe-port');
  let probePort: number | undefined;
  if (probePortOption) {
    const parsed = parsePort(probePortOption);
    if (isConfigError(parsed)) return parsed;
    probePort = parsed;
  }

  const terminationLog = raw.get('termination-log')?.value ?? '/dev/termination-log';
  return { interception, family, timeoutMs, failureExitCode, terminationLog, logFormat, logLevel, probeAddresses, probeAddressHints: {}, probePort, rules };
}

function oneOf<T extends string>(raw: RawOptions, name: string, allowed: readonly T[], fallback: T): T | ConfigError {
  const option = raw.get(name);
  if (!option) return fallback;
  const value = option.value.trim() as T;
  return allowed.includes(value) ? value : configError(option.source, option.value, `expected one of ${allowed.join(', ')}`);
}
