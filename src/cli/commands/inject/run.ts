import { EXIT } from '../../../config/exit-codes.js';
import type { FlagDef } from '../../../config/flag-def.js';
import type { Mesh } from '../../../config/interception.js';
import { injectJson, looksLikeJson } from '../../../inject/inject-json.js';
import { injectYaml } from '../../../inject/inject-yaml.js';
import { ok, type Result } from '../../../reason/result.js';
import { MAX_MANIFEST_BYTES, mebibytes, readManifestFile, readStdinBounded } from '../../input/read-manifest-input.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { NATIVE_SIDECAR_FLAG, parseCommandFlags, RULES_CHECK_FLAG } from '../manifest/run.js';
import { HELP_FLAG, VERSION_FLAG } from '../../../config/command-flags.js';
import { INBOUND_PORT_FLAG, MESH_FLAG, OUTBOUND_PORT_FLAG } from '../../../config/interception-flags.js';
import { REPORT_EVENT_FLAG } from '../../../config/validate-config.js';
import { IMAGE_FLAG } from '../../flags/image-flag.js';
import { commandError } from '../../command-error.js';
import { defaultImageWarning } from '../../flags/default-image.js';

const file = (text: string): Result<string, 'ConfigInvalid'> => ok(text);

export const INJECT_FLAGS: readonly FlagDef[] = [
  {
    name: 'filename',
    short: 'f',
    kind: 'value',
    placeholder: 'FILE|-',
    help: `Kubernetes YAML or JSON to inject into (- or none: standard input); a regular file, at most ${mebibytes(MAX_MANIFEST_BYTES)}.`,
    parse: file,
  },
  {
    name: 'after-container',
    kind: 'value',
    placeholder: 'NAME[,NAME]',
    help: 'Init containers that write the NAT rules (besides istio-init and linkerd-init): the validator goes after them.',
    parse: (text: string) =>
      ok(
        text
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean),
      ),
  },
  MESH_FLAG,
  IMAGE_FLAG,
  INBOUND_PORT_FLAG,
  OUTBOUND_PORT_FLAG,
  RULES_CHECK_FLAG,
  REPORT_EVENT_FLAG,
  NATIVE_SIDECAR_FLAG,
  HELP_FLAG,
  VERSION_FLAG,
];

type StdinReader = () => Buffer | Promise<Result<Buffer, 'ManifestUnreadable' | 'ManifestTooLarge'>>;

/** `interlock inject [-f FILE | -]`: the same YAML or JSON on stdout, the validator in every pod template. */
export async function runInject(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  readStdin: StdinReader = () => readStdinBounded(),
): Promise<CommandOutcome> {
  const parsed = parseCommandFlags('inject', kubectlSpelling(argv), INJECT_FLAGS, env);
  if (!parsed.ok) return commandError('inject', EXIT.invalidConfig, parsed.error);
  const { values } = parsed.value;
  const name = (values.get('filename') as string | undefined) ?? '-';
  const fromStdin = name === '-' ? await readStdin() : undefined;
  const read = Buffer.isBuffer(fromStdin) ? ok(fromStdin) : (fromStdin ?? readManifestFile(name));
  if (!read.ok)
    return commandError('inject', read.error.reason === 'ManifestTooLarge' ? EXIT.dataError : EXIT.noInput, read.error);
  const text = read.value.toString('utf8');
  // YAML and JSON are text: a NUL or bytes that are not UTF-8 mean a binary was given.
  if (text.includes('\u0000') || text.includes('\uFFFD'))
    return commandError('inject', EXIT.dataError, {
      reason: 'ManifestUnparseable',
      message: `${name === '-' ? '<stdin>' : name} is not text (a NUL byte or bytes that are not UTF-8): give Kubernetes YAML or JSON`,
    });
  const options = {
    ...(values.has('mesh') ? { mesh: values.get('mesh') as Mesh } : {}),
    image: values.get('image') as string,
    rulesCheck: values.has('rules-check'),
    reportEvent: values.has('report-event'),
    nativeSidecar: values.has('native-sidecar'),
    afterContainers: (values.get('after-container') as string[] | undefined) ?? [],
    extraArgs: ['inbound-port', 'outbound-port'].flatMap((flag) =>
      values.has(flag) ? [`--${flag}`, String(values.get(flag))] : [],
    ),
  };
  const source = name === '-' ? '<stdin>' : name;
  const result = looksLikeJson(text) ? injectJson(text, options, source) : injectYaml(text, options, source);
  if (!result.ok)
    return commandError(
      'inject',
      result.error.reason === 'ConfigInvalid' ? EXIT.invalidConfig : EXIT.dataError,
      result.error,
    );
  const notes = result.value.notes.map((note) => `interlock inject: ${note}\n`).join('');
  const warning = `${unusedAfterContainers(text, options.afterContainers)}${result.value.injected > 0 && !parsed.value.imageGiven ? defaultImageWarning('inject') : ''}`;
  return { exitCode: 0, stdout: result.value.output, stderr: `${notes}${warning}` };
}

/** A --after-container name no container of the input has: said, never silently ignored. */
function unusedAfterContainers(text: string, names: readonly string[]): string {
  const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return names
    .filter((name) => !new RegExp(`["']?name["']?\\s*:\\s*["']?${escape(name)}["']?\\s*[,}\\r\\n]`).test(`${text}\n`))
    .map(
      (name) =>
        `interlock inject: warning: --after-container ${name}: no container of the input has that name; the validator went where it would without it\n`,
    )
    .join('');
}

/** kubectl's `-f FILE` and a lone `-` (standard input) as the one long flag the shared reader knows. */
function kubectlSpelling(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    // `-f -` and `--filename -`: a lone `-` after them is the value, not a stray argument.
    if ((arg === '-f' || arg === '--filename') && argv[index + 1] === '-') words.push(`--filename=${argv[++index]}`);
    else words.push(arg === '-' ? '--filename=-' : arg);
  }
  return words;
}
