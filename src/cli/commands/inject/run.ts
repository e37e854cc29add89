import { EXIT } from '../../../config/exit-codes.js';
import { injectJson, looksLikeJson } from '../../../inject/inject-json.js';
import { injectYaml } from '../../../inject/inject-yaml.js';
import { ok, type Result } from '../../../reason/result.js';
import { readManifestFile, readStdinBounded } from '../../input/read-manifest-input.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { NATIVE_SIDECAR_FLAG, RULES_CHECK_FLAG } from '../manifest/flags.js';
import { validatorPortArgs } from '../../flags/validator-port-args.js';
import { MESH_FLAG } from '../../../config/interception-flags.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { flagSource, flagValue, givenValue } from '../../../config/parsed-flags.js';
import { REPORT_EVENT_FLAG } from '../../../config/validate-config.js';
import { IMAGE_FLAG } from '../../flags/image-flag.js';
import { PLATFORM_FLAG } from '../../flags/platform-flag.js';
import { AFTER_CONTAINER_FLAG, FILENAME_FLAG, INJECT_FLAGS } from './flags.js';
import { commandError } from '../../command-error.js';
import { defaultImageWarning } from '../../flags/default-image.js';

type StdinReader = () => Buffer | Promise<Result<Buffer, 'ManifestUnreadable' | 'ManifestTooLarge'>>;

/** `interlock inject [-f FILE | -]`: the same YAML or JSON on stdout, the validator in every pod template. */
export async function runInject(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  readStdin: StdinReader = () => readStdinBounded(),
): Promise<CommandOutcome> {
  const parsed = parseCommandLine('inject', kubectlSpelling(argv), env, INJECT_FLAGS);
  if (!parsed.ok) return commandError('inject', EXIT.invalidConfig, parsed.error);
  const values = parsed.value;
  const name = flagValue(values, FILENAME_FLAG) ?? '-';
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
  const mesh = givenValue(values, MESH_FLAG);
  const options = {
    ...(mesh === undefined ? {} : { mesh }),
    image: flagValue(values, IMAGE_FLAG),
    platform: flagValue(values, PLATFORM_FLAG),
    rulesCheck: flagValue(values, RULES_CHECK_FLAG) === true,
    reportEvent: flagValue(values, REPORT_EVENT_FLAG),
    nativeSidecar: flagValue(values, NATIVE_SIDECAR_FLAG) === true,
    afterContainers: flagValue(values, AFTER_CONTAINER_FLAG) ?? [],
    extraArgs: validatorPortArgs(values),
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
  const warning = `${unusedAfterContainers(text, options.afterContainers)}${result.value.injected > 0 && flagSource(values, IMAGE_FLAG) === undefined ? defaultImageWarning('inject') : ''}`;
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
