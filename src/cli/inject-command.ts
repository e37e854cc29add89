import { readFileSync } from 'node:fs';
import { EXIT } from '../config/exit-codes.js';
import type { FlagDef } from '../config/flag-def.js';
import type { Mesh } from '../config/interception.js';
import { injectYaml } from '../inject/inject-yaml.js';
import { ok, type Result } from '../reason/result.js';
import type { CommandOutcome } from './command-outcome.js';
import { MANIFEST_FLAGS, parseCommandFlags } from './manifest-command.js';
import { commandError } from './command-error.js';

const file = (text: string): Result<string, 'ConfigInvalid'> => ok(text);

export const INJECT_FLAGS: readonly FlagDef[] = [
  {
    name: 'filename',
    kind: 'value',
    placeholder: 'FILE|-',
    help: 'Kubernetes YAML to inject into (- or none: standard input).',
    commands: ['inject'],
    parse: file,
  },
  ...MANIFEST_FLAGS.filter((flag) => flag.commands.includes('inject')),
];

/** Input past this is refused (exit 65): a pipe must not exhaust memory. */
const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/**
 * `interlock inject [-f FILE | -]`: the same YAML on stdout, the validator in every pod template.
 * The work is synchronous; the Promise is the shape every command of run-cli.ts returns.
 */
export function runInject(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  readStdin: () => Buffer = () => readFileSync(0),
): Promise<CommandOutcome> {
  return Promise.resolve(inject(argv, env, readStdin));
}

function inject(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  readStdin: () => Buffer,
): CommandOutcome {
  const parsed = parseCommandFlags('inject', kubectlSpelling(argv), INJECT_FLAGS, env);
  if (!parsed.ok) return commandError('inject', EXIT.invalidConfig, parsed.error);
  const { values } = parsed.value;
  const name = (values.get('filename') as string | undefined) ?? '-';
  let input: Buffer;
  try {
    input = name === '-' ? readStdin() : readFileSync(name);
  } catch (cause) {
    return commandError('inject', EXIT.noInput, {
      reason: 'InputUnreadable',
      message: `cannot read ${name === '-' ? 'standard input' : name}: ${(cause as Error).message}`,
    });
  }
  if (input.length > MAX_INPUT_BYTES)
    return commandError('inject', EXIT.dataError, {
      reason: 'ManifestUnparseable',
      message: `${name} is larger than ${MAX_INPUT_BYTES} bytes`,
    });
  const result = injectYaml(
    input.toString('utf8'),
    {
      ...(values.has('mesh') ? { mesh: values.get('mesh') as Mesh } : {}),
      image: values.get('image') as string,
      rulesCheck: values.has('rules-check'),
      reportEvent: values.has('report-event'),
      nativeSidecar: values.has('native-sidecar'),
      extraArgs: ['inbound-port', 'outbound-port'].flatMap((flag) =>
        values.has(flag) ? [`--${flag}`, String(values.get(flag))] : [],
      ),
    },
    name === '-' ? '<stdin>' : name,
  );
  if (!result.ok)
    return commandError(
      'inject',
      result.error.reason === 'ConfigInvalid' ? EXIT.invalidConfig : EXIT.dataError,
      result.error,
    );
  const notes = result.value.notes.map((note) => `interlock inject: ${note}\n`).join('');
  return { exitCode: 0, stdout: result.value.output, stderr: notes };
}

/** kubectl's `-f FILE` and a lone `-` (standard input) as the one long flag the shared reader knows. */
function kubectlSpelling(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    if ((arg === '-f' || arg === '--filename') && index + 1 < argv.length)
      words.push(`--filename=${argv[++index] ?? ''}`);
    else words.push(arg === '-' ? '--filename=-' : arg);
  }
  return words;
}
