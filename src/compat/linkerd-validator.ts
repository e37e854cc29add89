import { fail, ok, type Result } from '../reason/result.js';
import { readForeignArgs, type ForeignOption } from './option-reader.js';

/** The path Linkerd's injector puts in `command:`; the image provides it. */
export const LINKERD_VALIDATOR_PATH = '/usr/lib/linkerd/linkerd2-network-validator';
export const LINKERD_VALIDATOR_NAME = 'linkerd2-network-validator';

const OPTIONS: readonly ForeignOption[] = [
  { key: 'log-format', names: ['--log-format'], takesValue: true },
  { key: 'log-level', names: ['--log-level'], takesValue: true },
  { key: 'connect-addr', names: ['--connect-addr'], takesValue: true },
  { key: 'listen-addr', names: ['--listen-addr'], takesValue: true },
  { key: 'timeout', names: ['--timeout'], takesValue: true },
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
  const given = new Map(read.value.map((arg) => [arg.key, arg.value]));
  const out = ['validate', '--mesh', 'linkerd'];
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
    const port = portOf(listen);
    if (port === undefined)
      return fail(
        'ConfigInvalid',
        `${LINKERD_VALIDATOR_NAME} --listen-addr ${JSON.stringify(listen)}: expected ADDRESS:PORT`,
      );
    out.push('--outbound-port', port);
  }
  const connect = given.get('connect-addr');
  if (connect !== undefined) {
    const port = portOf(connect);
    if (port === undefined)
      return fail(
        'ConfigInvalid',
        `${LINKERD_VALIDATOR_NAME} --connect-addr ${JSON.stringify(connect)}: expected ADDRESS:PORT`,
      );
    out.push('--probe-address-hint', connect);
  }
  const timeout = given.get('timeout');
  if (timeout !== undefined) out.push('--timeout', timeout);
  return ok(out);
}

/**
 * Linkerd's --log-level is a tracing filter (`debug`, `linkerd=debug,warn`); Interlock has one
 * level: the bare directive, or the most verbose one named.
 */
export function tracingLevel(filter: string): string {
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

/** `0.0.0.0:4140`, `[::]:4140`, `1.1.1.1:20001` -> the port; undefined when there is none. */
function portOf(address: string): string | undefined {
  const match = /^(?:\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(address.trim());
  const port = match ? Number(match[1]) : NaN;
  return port >= 1 && port <= 65535 ? String(port) : undefined;
}
