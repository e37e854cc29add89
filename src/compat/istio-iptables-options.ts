import type { ForeignOption } from './option-reader.js';

/** One istio-iptables option: its long and short names, whether it takes a value, the env names bound to it. */
export interface IstioOption extends ForeignOption {
  readonly env: readonly string[];
}

const value = (key: string, short: string | undefined, env: readonly string[]): IstioOption => ({
  key,
  names: [`--${key}`, ...(short ? [`-${short}`] : [])],
  takesValue: true,
  env,
});
const toggle = (key: string, short: string | undefined, env: readonly string[]): IstioOption => ({
  ...value(key, short, env),
  takesValue: false,
});
/** pkg/flag BindEnv (and 1.20's viper AutomaticEnv): the long name upper-cased, `-` as `_`. */
const bound = (key: string): string => key.toUpperCase().replace(/-/g, '_');

/**
 * Every option istio-iptables accepts in Istio 1.20 to the default branch, by its real long and
 * short names and no others, with the environment variables each reads
 * (test/fixtures/meshes/facts/istio-iptables-options.json, from tools/istio-iptables/pkg/cmd/root.go).
 * The union over versions: an argv from any supported release parses. `envoy-port` read ENVOY_PORT
 * only in 1.20 (viper); it is kept, as the older binary did.
 */
export const ISTIO_IPTABLES_OPTIONS: readonly IstioOption[] = [
  value('envoy-port', 'p', ['ENVOY_PORT']),
  ...(
    [
      ['inbound-capture-port', 'z'],
      ['inbound-tunnel-port', 'e'],
      ['proxy-uid', 'u'],
      ['proxy-gid', 'g'],
      ['istio-inbound-interception-mode', 'm'],
      ['istio-inbound-ports', 'b'],
      ['istio-local-exclude-ports', 'd'],
      ['istio-exclude-interfaces', 'c'],
      ['istio-service-cidr', 'i'],
      ['istio-service-exclude-cidr', 'x'],
      ['istio-outbound-ports', 'q'],
      ['istio-local-outbound-ports-exclude', 'o'],
      ['kube-virt-interfaces', 'k'],
      ['istio-inbound-tproxy-mark', 't'],
      ['istio-inbound-tproxy-route-table', 'r'],
      ['iptables-version', undefined],
      ['iptables-probe-port', undefined],
      ['probe-timeout', undefined],
      ['network-namespace', undefined],
      ['force-iptables-binary', undefined],
    ] as const
  ).map(([key, short]) => value(key, short, [bound(key)])),
  ...(
    [
      ['dry-run', 'n'],
      ['restore-format', 'f'],
      ['iptables-trace-logging', undefined],
      ['skip-rule-apply', undefined],
      ['run-validation', undefined],
      ['capture-all-dns', undefined],
      ['cni-mode', undefined],
      ['reconcile', undefined],
      ['cleanup-only', undefined],
      ['force-apply', undefined],
      ['native-nftables', undefined],
    ] as const
  ).map(([key, short]) => toggle(key, short, [bound(key)])),
  // AdditionalEnv: the proxy metadata names Istio's template copies into istio-validation's env.
  toggle('redirect-dns', undefined, ['REDIRECT_DNS', 'ISTIO_META_DNS_CAPTURE']),
  toggle('drop-invalid', undefined, ['DROP_INVALID', 'INVALID_DROP']),
  toggle('dual-stack', undefined, ['DUAL_STACK', 'ISTIO_DUAL_STACK']),
  // pilot-agent's logging flags (pkg/log), persistent on every subcommand.
  ...['log_output_level', 'log_stacktrace_level', 'log_caller', 'log_target', 'log_rotate']
    .concat(['log_rotate_max_age', 'log_rotate_max_size', 'log_rotate_max_backups'])
    .map((key) => ({ key, names: [`--${key}`], takesValue: true, env: [] })),
  { key: 'log_as_json', names: ['--log_as_json'], takesValue: false, env: [] },
  { key: 'help', names: ['--help', '-h'], takesValue: false, env: [] },
];
