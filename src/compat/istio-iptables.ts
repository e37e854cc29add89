import { fail, ok, type Result } from '../reason/result.js';
import { readForeignArgs, type ForeignArg, type ForeignOption } from './option-reader.js';

export const ISTIO_IPTABLES_NAME = 'istio-iptables';

const value = (key: string, ...names: string[]): ForeignOption => ({ key, names, takesValue: true });
const flag = (key: string, ...names: string[]): ForeignOption => ({ key, names, takesValue: false });

/** Options whose meaning maps onto an `interlock validate` flag (docs/rules.md's table). */
const MAPPED: Readonly<Record<string, string>> = {
  'proxy-port': '--outbound-port',
  'inbound-capture-port': '--inbound-port',
  'inbound-tunnel-port': '--inbound-tunnel-port',
  'proxy-uid': '--proxy-uid',
  'proxy-gid': '--proxy-gid',
  'service-cidr': '--include-outbound-cidrs',
  'service-exclude-cidr': '--exclude-outbound-cidrs',
  'inbound-ports': '--include-inbound-ports',
  'local-exclude-ports': '--exclude-inbound-ports',
  'outbound-ports-exclude': '--exclude-outbound-ports',
  'outbound-ports': '--include-outbound-ports',
  'kube-virt-interfaces': '--reroute-interfaces',
  'exclude-interfaces': '--exclude-interfaces',
  'host-loopback-cidr': '--host-loopback-cidr',
  'probe-port': '--probe-port',
  'probe-timeout': '--timeout',
};

const OPTIONS: readonly ForeignOption[] = [
  value('proxy-port', '-p', '--envoy-port', '--proxy-port'),
  value('inbound-capture-port', '-z', '--inbound-capture-port'),
  value('inbound-tunnel-port', '-e', '--inbound-tunnel-port'),
  value('proxy-uid', '-u', '--proxy-uid'),
  value('proxy-gid', '-g', '--proxy-gid'),
  value('interception-mode', '-m', '--istio-inbound-interception-mode'),
  value('tproxy-mark', '-t', '--istio-inbound-tproxy-mark'),
  value('tproxy-route-table', '-r', '--istio-inbound-tproxy-route-table'),
  value('inbound-ports', '-b', '--istio-inbound-ports'),
  value('local-exclude-ports', '-d', '--istio-local-exclude-ports'),
  value('outbound-ports-exclude', '-o', '--istio-local-outbound-ports-exclude'),
  value('outbound-ports', '-q', '--istio-outbound-ports'),
  value('service-cidr', '-i', '--istio-service-cidr'),
  value('service-exclude-cidr', '-x', '--istio-service-exclude-cidr'),
  value('kube-virt-interfaces', '-k', '--kube-virt-interfaces'),
  value('exclude-interfaces', '-c', '--exclude-interfaces'),
  value('host-loopback-cidr', '--host-ipv4-loopback-cidr'),
  value('probe-port', '--iptables-probe-port'),
  value('probe-timeout', '--probe-timeout'),
  value('log-level', '--log_output_level'),
  value(
    'log-ignored',
    '--log_caller',
    '--log_stacktrace_level',
    '--log_target',
    '--log_rotate',
    '--log_rotate_max_age',
    '--log_rotate_max_size',
    '--log_rotate_max_backups',
  ),
  flag('log-json', '--log_as_json'),
  flag('native-nftables', '--native-nftables'),
  flag('run-validation', '--run-validation'),
  flag('skip-rule-apply', '--skip-rule-apply'),
  flag('dry-run', '-n', '--dry-run'),
  flag('redirect-dns', '--redirect-dns'),
  flag('capture-all-dns', '--capture-all-dns'),
  flag('drop-invalid', '--drop-invalid'),
];

/**
 * istio-iptables' argv (what Istio's injector puts in `istio-validation`'s args, after the program
 * name) and its environment, as `interlock validate` argv with Istio's preset (exit 126). Only the
 * validation mode is accepted: without --run-validation and --skip-rule-apply istio-iptables writes
 * rules, and Interlock never writes rules.
 */
export function istioIptablesToValidate(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Result<string[], 'ConfigInvalid'> {
  const read = readForeignArgs(argv, OPTIONS, ISTIO_IPTABLES_NAME);
  if (!read.ok) return read;
  const last = new Map(read.value.map((arg) => [arg.key, arg] as const));
  if (!last.has('run-validation') || !last.has('skip-rule-apply')) {
    const missing = ['--run-validation', '--skip-rule-apply'].filter((name) => !last.has(name.slice(2))).join(' and ');
    return fail(
      'ConfigInvalid',
      `${ISTIO_IPTABLES_NAME} without ${missing} would write iptables rules; Interlock only validates and never writes rules. Keep Istio's CNI mode (istio-validation runs with --run-validation --skip-rule-apply)`,
    );
  }
  const out = ['validate', '--mesh', 'istio', '--log-format', last.has('log-json') ? 'json' : 'plain'];
  const mapped = mappedFlags(read.value, env);
  if (!mapped.ok) return mapped;
  out.push(...mapped.value);
  const mode = last.get('interception-mode')?.value;
  if (mode !== undefined && mode !== 'REDIRECT' && mode !== 'TPROXY')
    return fail('ConfigInvalid', `${ISTIO_IPTABLES_NAME} -m ${JSON.stringify(mode)}: expected REDIRECT or TPROXY`);
  if (mode === 'TPROXY') out.push('--tproxy');
  if (last.has('capture-all-dns')) out.push('--dns-capture');
  if (last.has('drop-invalid')) out.push('--drop-invalid');
  const level = last.get('log-level')?.value;
  if (level !== undefined) out.push('--log-level', istioLogLevel(level));
  return ok(out);
}

function mappedFlags(
  args: readonly ForeignArg[],
  env: Readonly<Record<string, string | undefined>>,
): Result<string[], 'ConfigInvalid'> {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const arg of args) {
    const target = MAPPED[arg.key];
    if (!target) continue;
    seen.add(arg.key);
    out.push(`${target}=${arg.key === 'probe-timeout' ? goDuration(arg.value) : arg.value}`);
  }
  // istio-iptables reads these two from the environment when the flags are absent.
  if (!seen.has('probe-port') && env.IPTABLES_PROBE_PORT) out.push(`--probe-port=${env.IPTABLES_PROBE_PORT}`);
  if (!seen.has('probe-timeout') && env.PROBE_TIMEOUT) out.push(`--timeout=${goDuration(env.PROBE_TIMEOUT)}`);
  return ok(out);
}

/** Go durations Interlock's parser also takes pass through; `1m30s` becomes `90s`. */
function goDuration(text: string): string {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length <= 1 || parts.map((part) => part[0]).join('') !== text) return text;
  const ms = parts.reduce(
    (sum, part) =>
      sum + Number(part[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[part[2] as 'ms' | 's' | 'm' | 'h'],
    0,
  );
  return `${ms}ms`;
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
