import { formatIp, parseIp, type IpAddress } from '../addr/ip.js';
import { LINKERD } from '../mesh/linkerd.js';
import type { DropInArgv } from '../mesh/mesh-identity.js';
import { fail, ok, type Result } from '../reason/result.js';
import { notAVerdict } from './foreign-switches.js';
import { parseLinkerdTimeout } from './linkerd-timeout.js';
import { readForeignArgs, type ForeignOption } from './option-reader.js';

/** The program whose argv this file maps, as its messages name it. */
const LINKERD_VALIDATOR_NAME = 'linkerd2-network-validator' satisfies DropInArgv;

/** Interlock's --timeout range; the validator's own syntax allows 0 and days, clamped into it. */
const MIN_TIMEOUT_MS = 100n;
const MAX_TIMEOUT_MS = 3_600_000n;

const OPTIONS: readonly ForeignOption[] = [
  { key: 'log-format', names: ['--log-format'], takesValue: true },
  { key: 'log-level', names: ['--log-level'], takesValue: true },
  { key: 'connect-addr', names: ['--connect-addr'], takesValue: true },
  { key: 'listen-addr', names: ['--listen-addr'], takesValue: true },
  { key: 'timeout', names: ['--timeout'], takesValue: true },
  { key: 'help', names: ['--help', '-h'], takesValue: false },
  { key: 'version', names: ['--version', '-V'], takesValue: false },
];

/**
 * linkerd-network-validator's argv and environment, as `interlock validate` argv with Linkerd's
 * preset (exit 95). The listen port is the proxy's outbound port; the connect address is only a
 * hint for the probe destination, because Linkerd's chart default (1.1.1.1:20001) is unreachable
 * in an air-gapped cluster and Interlock can choose a routed address itself.
 */
export function linkerdValidatorToValidate(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Result<string[], 'ConfigInvalid'> {
  const read = readForeignArgs(argv, OPTIONS, LINKERD_VALIDATOR_NAME);
  if (!read.ok) return read;
  // clap's help and version actions take no value: any spelling of them is a refusal.
  const switched = read.value.find((arg) => arg.key === 'help' || arg.key === 'version');
  if (switched) return notAVerdict(LINKERD_VALIDATOR_NAME, switched.name, switched.key === 'help' ? 'help' : 'version');
  const given = new Map(read.value.map((arg) => [arg.key, arg.value]));
  const out = ['validate', '--mesh', LINKERD.name];
  const format = given.get('log-format') ?? env.LINKERD_NETWORK_VALIDATOR_LOG_FORMAT;
  if (format !== undefined) {
    if (format !== 'plain' && format !== 'json')
      return fail(
        'ConfigInvalid',
        `${LINKERD_VALIDATOR_NAME} --log-format ${JSON.stringify(format)}: expected plain or json`,
      );
    out.push('--log-format', format);
  }
  const level = given.get('log-level') ?? env.LINKERD_NETWORK_VALIDATOR_LOG_LEVEL;
  if (level !== undefined) out.push('--log-level', tracingLevel(level));
  const listen = given.get('listen-addr');
  if (listen !== undefined) {
    const address = socketAddress(listen);
    if (address === undefined)
      return fail(
        'ConfigInvalid',
        `${LINKERD_VALIDATOR_NAME} --listen-addr ${JSON.stringify(listen)}: expected ADDRESS:PORT (IPv6 as [ADDRESS]:PORT)`,
      );
    out.push(`--outbound-port=${address.port}`);
  }
  // The connect port is the one Linkerd's validator probes, so the one Linkerd guarantees captured;
  // the address is only a hint (1.1.1.1 is unreachable air-gapped; Interlock chooses a routed one).
  const connect = given.get('connect-addr');
  if (connect !== undefined) {
    const address = socketAddress(connect);
    if (address === undefined)
      return fail(
        'ConfigInvalid',
        `${LINKERD_VALIDATOR_NAME} --connect-addr ${JSON.stringify(connect)}: expected ADDRESS:PORT (IPv6 as [ADDRESS]:PORT)`,
      );
    out.push(`--probe-address-hint=${formatIp(address.ip)}`, `--probe-port=${address.port}`);
  }
  const timeout = given.get('timeout');
  if (timeout !== undefined) {
    const ms = parseLinkerdTimeout(timeout);
    if (!ms.ok)
      return fail(
        'ConfigInvalid',
        `${LINKERD_VALIDATOR_NAME} --timeout ${JSON.stringify(timeout)}: ${ms.error.message}`,
      );
    const clamped = ms.value < MIN_TIMEOUT_MS ? MIN_TIMEOUT_MS : ms.value > MAX_TIMEOUT_MS ? MAX_TIMEOUT_MS : ms.value;
    out.push(`--timeout=${clamped}ms`);
  }
  return ok(out);
}

/**
 * Linkerd's --log-level is a tracing filter (`debug`, `linkerd=debug,warn`); Interlock has one
 * level: the bare directive, or the most verbose one named.
 */
export function tracingLevel(filter: string): string {
  if (filter.trim().toLowerCase() === 'off') return 'silent';
  const order = ['trace', 'debug', 'info', 'warn', 'error'];
  const levels = filter
    .split(',')
    .map((directive) => directive.split('=').at(-1)?.trim().toLowerCase() ?? '')
    .filter((level) => order.includes(level));
  const bare = filter
    .split(',')
    .map((directive) => directive.trim().toLowerCase())
    .find((directive) => order.includes(directive));
  if (bare) return bare;
  return levels.sort((a, b) => order.indexOf(a) - order.indexOf(b))[0] ?? 'info';
}

/**
 * A Rust `SocketAddr`: `0.0.0.0:4140`, `1.1.1.1:20001`, `[fd00::1]:20001`, `[::]:4140`. Port 0
 * is refused: nothing can be probed or listened for on it.
 */
function socketAddress(text: string): { readonly ip: IpAddress; readonly port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):([0-9]{1,5})$/.exec(text);
  if (!match) return undefined;
  const ip = parseIp(match[1] ?? match[2] ?? '');
  const port = Number(match[3]);
  if (!ip || (match[1] !== undefined) !== (ip.family === 'ipv6') || port < 1 || port > 65535) return undefined;
  return { ip, port };
}
