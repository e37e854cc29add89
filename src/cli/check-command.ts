import { homedir } from 'node:os';
import { join } from 'node:path';
import { HELP_FLAG, VERSION_FLAG } from '../config/command-flags.js';
import { EXIT } from '../config/exit-codes.js';
import type { FlagDef } from '../config/flag-def.js';
import { oneOf } from '../config/flag-parsers.js';
import { parseCommandLine } from '../config/parse-command-line.js';
import { kubeconfigAccess } from '../kube/kubeconfig.js';
import { fail, ok, type Result } from '../reason/result.js';
import { renderChecks } from './check-report.js';
import { runChecks } from './check-run.js';
import { getter, readInstall } from './check-snapshot.js';
import { commandError } from './command-error.js';
import { NODE_NAMESPACE_FLAG, WEBHOOK_NAMESPACE_FLAG } from './part-namespace-flags.js';
import type { CommandOutcome } from './command-outcome.js';

const text = (value: string): Result<string, 'ConfigInvalid'> =>
  value.trim() ? ok(value.trim()) : fail('ConfigInvalid', 'must not be empty');

export const CHECK_FLAGS: readonly FlagDef[] = [
  {
    name: 'kubeconfig',
    kind: 'value',
    placeholder: 'FILE',
    help: 'The kubeconfig to use (default: $KUBECONFIG, else ~/.kube/config, as kubectl reads them).',
    parse: text,
  },
  {
    name: 'context',
    kind: 'value',
    placeholder: 'NAME',
    help: 'The kubeconfig context to use (default: its current-context).',
    parse: text,
  },
  WEBHOOK_NAMESPACE_FLAG,
  NODE_NAMESPACE_FLAG,
  {
    name: 'output',
    short: 'o',
    kind: 'value',
    placeholder: 'text|json',
    help: 'Output format (default {default}).',
    parse: oneOf(['text', 'json']),
    default: 'text',
  },
  HELP_FLAG,
  VERSION_FLAG,
];

/** `interlock check`: read the installed parts once, check them, say what to fix. */
export async function runCheck(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  now: () => Date = () => new Date(),
): Promise<CommandOutcome> {
  const parsed = parseCommandLine('check', argv, {}, CHECK_FLAGS);
  if (!parsed.ok) return commandError('check', EXIT.invalidConfig, parsed.error);
  const values = parsed.value.values;
  const kubeconfig =
    (values.get('kubeconfig') as string | undefined) ?? (env.KUBECONFIG || join(homedir(), '.kube', 'config'));
  const access = kubeconfigAccess(kubeconfig, values.get('context') as string | undefined);
  if (!access.ok) return commandError('check', EXIT.noInput, access.error);
  const snapshot = await readInstall(
    getter(access.value),
    access.value,
    {
      ...(values.has('webhook-namespace') ? { webhook: values.get('webhook-namespace') as string } : {}),
      ...(values.has('node-namespace') ? { node: values.get('node-namespace') as string } : {}),
    },
    now(),
  );
  const results = runChecks(snapshot);
  const failed = results.some((result) => result.status === 'fail');
  return {
    exitCode: failed ? EXIT.checkFailed : EXIT.pass,
    stdout: renderChecks(snapshot, results, values.get('output') === 'json' ? 'json' : 'text'),
    stderr: '',
  };
}
