import { describeProblem, readBoundedFile } from '../file/read-bounded-file.js';
import { KUMA } from '../mesh/kuma.js';
import type { DropInArgv } from '../mesh/mesh-identity.js';
import { fail, ok, type Result } from '../reason/result.js';
import { notAVerdict } from './foreign-switches.js';
import { parseKumaConfig } from './kuma-config-text.js';
import { readForeignArgs, type ForeignOption } from './option-reader.js';

/** The program whose argv this file maps, as its messages name it. */
const KUMACTL = 'kumactl' satisfies DropInArgv;
const SUBCOMMAND = ['install', 'transparent-proxy-validator'];
/** A transparent-proxy config is a few kilobytes; a ConfigMap holds at most 1 MiB. */
const MAX_CONFIG_BYTES = 1024 * 1024;

const OPTIONS: readonly ForeignOption[] = [
  // kumactl's own client configuration (API server, contexts): nothing the validator reads.
  { key: 'config-file', names: ['--config-file'], takesValue: true },
  { key: 'ip-family-mode', names: ['--ip-family-mode'], takesValue: true },
  { key: 'validation-server-port', names: ['--validation-server-port'], takesValue: true },
  { key: 'transparent-proxy-config', names: ['--transparent-proxy-config'], takesValue: true },
  { key: 'help', names: ['--help', '-h'], takesValue: false },
];

/** kumactl's --ip-family-mode: dualstack validates IPv6 only where the pod has it (Interlock's auto). */
const FAMILIES: Readonly<Record<string, string>> = { dualstack: 'auto', ipv4: 'ipv4', ipv6: 'ipv6' };

type Settings = Map<string, string>;

/**
 * `kumactl install transparent-proxy-validator ...` as Kuma's injector renders kuma-validation
 * (`--config-file=/tmp/.kumactl`, then either `--ip-family-mode` and `--validation-server-port`,
 * or `--transparent-proxy-config` naming the mounted ConfigMaps' config.yaml, the pod's custom one
 * from `traffic.kuma.io/transparent-proxy-configmap-name` last), as `interlock validate` argv with
 * Kuma's preset. Later configs override earlier ones, as kumactl merges them; with any config,
 * the family and port come from the configs, never from the two flags.
 */
export function kumactlValidatorToValidate(argv: readonly string[]): Result<string[], 'ConfigInvalid'> {
  // Bare flags (the image's entrypoint given only the args) or the program and its subcommand.
  const bare = argv[0]?.startsWith('-') === true;
  if (!bare && !SUBCOMMAND.every((word, index) => argv[index + 1] === word))
    return fail('ConfigInvalid', `${KUMACTL}: Interlock stands in for "${KUMACTL} ${SUBCOMMAND.join(' ')}" only`);
  const rest = bare ? argv : argv.slice(1 + SUBCOMMAND.length);
  const read = readForeignArgs(rest, OPTIONS, `${KUMACTL} ${SUBCOMMAND.join(' ')}`);
  if (!read.ok) return read;
  const help = read.value.find((arg) => arg.key === 'help');
  if (help) return notAVerdict(KUMACTL, help.name, 'help');
  const flags: Settings = new Map();
  const files: string[] = [];
  for (const arg of read.value) {
    if (arg.key === 'ip-family-mode') flags.set('family', arg.value);
    if (arg.key === 'validation-server-port') flags.set('inbound-port', arg.value);
    if (arg.key === 'transparent-proxy-config') files.push(...arg.value.split(','));
  }
  // With a config kumactl reads the family and port from it (over its defaults), not the flags,
  // which cobra has still parsed: a value it would refuse is refused.
  const flagged = toValidate(flags);
  if (files.length === 0 || !flagged.ok) return flagged;
  const port = flags.get('inbound-port');
  if (port !== undefined && !(/^\d{1,5}$/.test(port) && Number(port) <= 65535))
    return fail('ConfigInvalid', `${KUMACTL} --validation-server-port ${JSON.stringify(port)}: expected a port`);
  const merged = mergeConfigFiles(files);
  if (!merged.ok) return merged;
  const settings: Settings = new Map();
  const applied = applyConfig(merged.value, settings);
  return applied.ok ? toValidate(settings) : applied;
}

function toValidate(settings: Settings): Result<string[], 'ConfigInvalid'> {
  const out = ['validate', '--mesh', KUMA.name];
  const mode = settings.get('family');
  if (mode !== undefined) {
    const family = FAMILIES[mode];
    if (family === undefined)
      return fail(
        'ConfigInvalid',
        `${KUMACTL} ip family mode ${JSON.stringify(mode)}: expected dualstack, ipv4 or ipv6`,
      );
    out.push('--family', family);
  }
  for (const [key, value] of settings) {
    if (key === 'dns-capture') out.push('--dns-capture');
    else if (key !== 'family') out.push(`--${key}`, value);
  }
  return ok(out);
}

/** The configs merged, and which file set each value (a scalar or a whole list), by its dotted path. */
interface MergedConfig {
  readonly config: Record<string, unknown>;
  readonly origin: Map<string, string>;
}

/**
 * Each file read and merged over the ones before it as kumactl's loader does (each document
 * decoded onto the same struct): mappings key by key, a scalar or a list replacing the earlier
 * one whole.
 */
function mergeConfigFiles(files: readonly string[]): Result<MergedConfig, 'ConfigInvalid'> {
  const merged: MergedConfig = { config: {}, origin: new Map() };
  for (const file of files) {
    const read = readConfigFile(file);
    if (!read.ok) return read;
    mergeInto(merged.config, read.value, file, '', merged.origin);
  }
  return ok(merged);
}

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function mergeInto(
  target: Record<string, unknown>,
  source: Record<string, unknown>,
  file: string,
  prefix: string,
  origin: Map<string, string>,
): void {
  for (const [key, value] of Object.entries(source)) {
    const path = `${prefix}${key}`;
    if (isMapping(value)) {
      const into = isMapping(target[key]) ? target[key] : {};
      target[key] = into;
      mergeInto(into, value, file, `${path}.`, origin);
      continue;
    }
    target[key] = value;
    origin.set(path, file);
  }
}

function readConfigFile(file: string): Result<Record<string, unknown>, 'ConfigInvalid'> {
  if (file === '-')
    return fail('ConfigInvalid', `${KUMACTL} --transparent-proxy-config -: an init container has no input to read`);
  const read = readBoundedFile(file, MAX_CONFIG_BYTES);
  if (!read.ok)
    return fail('ConfigInvalid', `${KUMACTL} --transparent-proxy-config ${file}: ${describeProblem(read.error)}`);
  const config = parseKumaConfig(read.bytes.toString('utf8'));
  if (!config.ok)
    return fail('ConfigInvalid', `${KUMACTL} --transparent-proxy-config ${file}: ${config.error.message}`);
  if (!isMapping(config.value))
    return fail('ConfigInvalid', `${KUMACTL} --transparent-proxy-config ${file}: expected a mapping`);
  return ok(config.value);
}

/** The fields of Kuma's transparent-proxy config that decide which rules are correct. */
const FIELDS: ReadonlyArray<readonly [path: readonly string[], setting: string]> = [
  [['ipFamilyMode'], 'family'],
  [['kumaDPUser'], 'proxy-uid'],
  [['redirect', 'inbound', 'port'], 'inbound-port'],
  [['redirect', 'outbound', 'port'], 'outbound-port'],
  [['redirect', 'inbound', 'excludePorts'], 'exclude-inbound-ports'],
  [['redirect', 'outbound', 'excludePorts'], 'exclude-outbound-ports'],
  [['redirect', 'dns', 'port'], 'dns-port'],
];

/** Settings that change which rules are correct and that Interlock does not model: refused when set. */
const UNMODELLED: ReadonlyArray<readonly string[]> = [
  ['redirect', 'inbound', 'excludePortsForIPs'],
  ['redirect', 'inbound', 'excludePortsForUIDs'],
  ['redirect', 'outbound', 'excludePortsForIPs'],
  ['redirect', 'outbound', 'excludePortsForUIDs'],
  ['redirect', 'outbound', 'includePorts'],
  ['redirect', 'inbound', 'includePorts'],
  ['redirect', 'vnet', 'networks'],
];

function at(config: Record<string, unknown>, path: readonly string[]): unknown {
  let value: unknown = config;
  for (const key of path)
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

const isSet = (value: unknown) =>
  value !== undefined && value !== null && value !== '' && !(Array.isArray(value) && value.length === 0);

function applyConfig(merged: MergedConfig, settings: Settings): Result<void, 'ConfigInvalid'> {
  const { config } = merged;
  const where = (path: readonly string[]) =>
    `${KUMACTL} --transparent-proxy-config ${merged.origin.get(path.join('.')) ?? '(merged)'}`;
  for (const path of UNMODELLED)
    if (isSet(at(config, path)))
      return fail(
        'ConfigInvalid',
        `${where(path)}: ${path.join('.')} is set, which Interlock does not check yet; remove it or validate with interlock's own flags`,
      );
  for (const flow of ['inbound', 'outbound']) {
    const path = ['redirect', flow, 'enabled'];
    if (String(at(config, path)) === 'false')
      return fail(
        'ConfigInvalid',
        `${where(path)}: redirect.${flow}.enabled is false: there is no ${flow} capture to prove`,
      );
  }
  for (const [path, setting] of FIELDS) {
    const value = at(config, path);
    if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) continue;
    const items: unknown[] = Array.isArray(value) ? value : [value];
    const texts = items.map((item) =>
      typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean' ? String(item) : undefined,
    );
    if (texts.includes(undefined)) return fail('ConfigInvalid', `${where(path)}: ${path.join('.')} is not a value`);
    settings.set(setting, texts.join(','));
  }
  // A switch: on by its name alone; Kuma's preset leaves DNS capture off.
  if (String(at(config, ['redirect', 'dns', 'enabled'])) !== 'true') return ok(undefined);
  const captureAll = ['redirect', 'dns', 'captureAll'];
  if (String(at(config, captureAll)) === 'false')
    return fail(
      'ConfigInvalid',
      `${where(captureAll)}: redirect.dns.captureAll is false: Kuma then captures only DNS to resolv.conf's servers, which Interlock does not check yet; remove it or validate with interlock's own flags`,
    );
  settings.set('dns-capture', '');
  return ok(undefined);
}
