import { formatPortSet } from '../addr/port-set.js';
import { ISTIO } from '../mesh/istio.js';
import type { DropInArgv } from '../mesh/mesh-identity.js';
import { fail, ok, type Result } from '../reason/result.js';
import { notAVerdict } from './foreign-switches.js';
import { goDurationMs } from './go-duration.js';
import { ISTIO_IPTABLES_OPTIONS } from './istio-iptables-options.js';
import { goBool, readForeignArgs } from './option-reader.js';

/** The program whose argv this file maps, as its messages name it. */
const ISTIO_IPTABLES_NAME = 'istio-iptables' satisfies DropInArgv;

/** The uid and gid the validator process runs as (the pod's runAsUser / runAsGroup). */
export interface ProcessIdentity {
  readonly uid: number;
  readonly gid: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Options whose meaning maps onto an `interlock validate` flag (docs/rules.md's table). */
const MAPPED: Readonly<Record<string, string>> = {
  'envoy-port': '--outbound-port',
  'inbound-capture-port': '--inbound-port',
  'inbound-tunnel-port': '--inbound-tunnel-port',
  'proxy-uid': '--proxy-uid',
  'istio-service-cidr': '--include-outbound-cidrs',
  'istio-service-exclude-cidr': '--exclude-outbound-cidrs',
  'istio-inbound-ports': '--include-inbound-ports',
  'istio-local-exclude-ports': '--exclude-inbound-ports',
  'istio-outbound-ports': '--include-outbound-ports',
  'kube-virt-interfaces': '--reroute-interfaces',
  'istio-exclude-interfaces': '--exclude-interfaces',
  'iptables-probe-port': '--probe-port',
};

/** istio-cni's outbound exclusion when the pod has no excludeOutboundPorts annotation (cni/pkg/plugin/sidecar_redirect.go): the preset's. */
const CNI_DEFAULT_OUTBOUND_EXCLUDE = formatPortSet(ISTIO.capture.excludeOutboundPorts);
/** istio-cni's uid/gid when the proxy container sets none (or 0): the preset's proxy uid. */
const CNI_DEFAULT_PROXY_ID = ISTIO.capture.proxyUids[0];
const MIN_TIMEOUT_MS = 100;
const MAX_TIMEOUT_MS = 3_600_000;

/**
 * istio-iptables' argv (what Istio's injector puts in `istio-validation`'s args, after the program
 * name) and its environment, as `interlock validate` argv with Istio's preset (exit 126). Only the
 * validation mode is accepted: without --run-validation and --skip-rule-apply istio-iptables writes
 * rules, and Interlock never writes rules.
 */
export function istioIptablesToValidate(
  argv: readonly string[],
  env: Env,
  identity?: ProcessIdentity,
): Result<string[], 'ConfigInvalid'> {
  const read = readForeignArgs(argv, ISTIO_IPTABLES_OPTIONS, ISTIO_IPTABLES_NAME);
  if (!read.ok) return read;
  const given = new Map(read.value.map((arg) => [arg.key, arg.value] as const));
  const values = withEnvironment(given, env);
  // cobra prints the usage and exits 0 on a true -h/--help; --help=false is no help at all.
  const help = read.value.findLast((arg) => arg.key === 'help');
  if (help?.value === 'true') return notAVerdict(ISTIO_IPTABLES_NAME, help.name, 'help');
  const modes = ['run-validation', 'skip-rule-apply'].filter((key) => values.get(key) !== 'true');
  if (modes.length > 0) {
    const missing = modes.map((key) => `--${key}`).join(' and ');
    return fail(
      'ConfigInvalid',
      `${ISTIO_IPTABLES_NAME} without ${missing} would write iptables rules; Interlock only validates and never writes rules. Keep Istio's CNI mode (istio-validation runs with --run-validation --skip-rule-apply)`,
    );
  }
  const out = [
    'validate',
    '--mesh',
    ISTIO.name,
    '--log-format',
    values.get('log_as_json') === 'true' ? 'json' : 'plain',
  ];
  for (const [key, target] of Object.entries(MAPPED)) {
    const text = values.get(key);
    if (text !== undefined) out.push(`${target}=${text}`);
  }
  out.push(`--proxy-gid=${proxyGid(values, identity, env)}`);
  // Always explicit, so the probe knows the exclusions and may spread over other ports.
  out.push(
    `--exclude-outbound-ports=${values.get('istio-local-outbound-ports-exclude') ?? CNI_DEFAULT_OUTBOUND_EXCLUDE}`,
  );
  const behaviour = behaviourFlags(values);
  if (!behaviour.ok) return behaviour;
  out.push(...behaviour.value);
  return ok(out);
}

/** pflag's order: the environment is read when the flag is bound, argv overrides it; a later env name wins. */
function withEnvironment(given: ReadonlyMap<string, string>, env: Env): Map<string, string> {
  const values = new Map(given);
  for (const option of ISTIO_IPTABLES_OPTIONS) {
    if (given.has(option.key)) continue;
    for (const name of option.env) {
      const text = env[name];
      if (text === undefined) continue;
      if (!option.takesValue) {
        // An unparseable boolean is ignored, as pflag's `_ = fs.Set(...)` ignores it.
        const state = goBool(text);
        if (state !== undefined) values.set(option.key, String(state));
      } else values.set(option.key, text);
    }
  }
  return values;
}

/**
 * With `-g` absent istio-iptables takes the uid as the gid; under istio-cni the rules use the
 * proxy's runAsGroup (1337 when unset or 0), which the template also gives istio-validation: so
 * when the validator runs as the proxy's uid, its own gid is the rules' gid. Run as another
 * identity, `INTERLOCK_PROXY_GID` (set by whoever changed the identity) names it.
 */
function proxyGid(values: ReadonlyMap<string, string>, identity: ProcessIdentity | undefined, env: Env): string {
  const gid = values.get('proxy-gid');
  if (gid !== undefined) return gid;
  // Run as another identity (uid 0 for the rules check), the injector records the proxy's runAsGroup here.
  const recorded = env.INTERLOCK_PROXY_GID;
  if (recorded !== undefined && recorded !== '') return recorded;
  const uid = values.get('proxy-uid') ?? String(CNI_DEFAULT_PROXY_ID);
  if (identity && uid.split(',').includes(String(identity.uid)))
    return String(identity.gid === 0 ? CNI_DEFAULT_PROXY_ID : identity.gid);
  return uid;
}

function behaviourFlags(values: ReadonlyMap<string, string>): Result<string[], 'ConfigInvalid'> {
  const out: string[] = [];
  const mode = values.get('istio-inbound-interception-mode') ?? '';
  if (mode !== '' && mode !== 'REDIRECT' && mode !== 'TPROXY')
    return fail('ConfigInvalid', `${ISTIO_IPTABLES_NAME} -m ${JSON.stringify(mode)}: expected REDIRECT or TPROXY`);
  if (mode === 'TPROXY') out.push('--tproxy');
  // istio-cni captures DNS to every server (it cannot read the pod's resolv.conf).
  if (values.get('redirect-dns') === 'true' || values.get('capture-all-dns') === 'true') out.push('--dns-capture');
  if (values.get('drop-invalid') === 'true') out.push('--drop-invalid');
  const timeout = values.get('probe-timeout');
  if (timeout !== undefined) {
    const ms = goDurationMs(timeout);
    if (ms === undefined)
      return fail(
        'ConfigInvalid',
        `${ISTIO_IPTABLES_NAME} --probe-timeout ${JSON.stringify(timeout)}: not a Go duration`,
      );
    out.push(`--timeout=${Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, ms))}ms`);
  }
  const level = values.get('log_output_level');
  if (level !== undefined) out.push('--log-level', istioLogLevel(level));
  return ok(out);
}

/** `default:info,validation:debug` (Istio's scoped levels) -> the default scope's level; `none` is silent. */
export function istioLogLevel(spec: string): string {
  const scopes = new Map(
    spec.split(',').map((part) => {
      const [scope, level] = part.includes(':') ? part.split(':', 2) : ['default', part];
      return [scope?.trim() ?? '', (level ?? '').trim().toLowerCase()] as const;
    }),
  );
  const level = scopes.get('default') ?? scopes.get('validation') ?? 'info';
  return level === 'none' ? 'silent' : ['debug', 'info', 'warn', 'error', 'fatal'].includes(level) ? level : 'info';
}
