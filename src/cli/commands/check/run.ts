import { homedir } from 'node:os';
import { join } from 'node:path';
import { HELP_FLAG, VERSION_FLAG } from '../../../config/command-flags.js';
import { EXIT } from '../../../config/exit-codes.js';
import type { FlagDef } from '../../../config/flag-def.js';
import { parseNonBlank } from '../../../config/flag-parsers.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { flagValue } from '../../../config/parsed-flags.js';
import { kubeconfigAccess } from '../../../kube/kubeconfig.js';
import { renderChecks } from '../../../install-check/check-report.js';
import { runChecks } from '../../../install-check/check-run.js';
import { getter, readInstall } from '../../../install-check/check-snapshot.js';
import { commandError } from '../../command-error.js';
import { NODE_NAMESPACE_FLAG, WEBHOOK_NAMESPACE_FLAG } from '../../flags/part-namespace-flags.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { textOrJsonFlag } from '../../flags/text-or-json-flag.js';

// Argv only: `check` reads KUBECONFIG as kubectl does, and no INTERLOCK_* variable.
const KUBECONFIG_FLAG: FlagDef<string> = {
  name: 'kubeconfig',
  kind: 'value',
  placeholder: 'FILE',
  help: 'The kubeconfig to use (default: $KUBECONFIG, else ~/.kube/config, as kubectl reads them).',
  parse: parseNonBlank('must not be empty'),
};

const CONTEXT_FLAG: FlagDef<string> = {
  name: 'context',
  kind: 'value',
  placeholder: 'NAME',
  help: 'The kubeconfig context to use (default: its current-context).',
  parse: parseNonBlank('must not be empty'),
};

const CHECK_OUTPUT_FLAG = textOrJsonFlag();

export const CHECK_FLAGS: readonly FlagDef[] = [
  KUBECONFIG_FLAG,
  CONTEXT_FLAG,
  WEBHOOK_NAMESPACE_FLAG,
  NODE_NAMESPACE_FLAG,
  CHECK_OUTPUT_FLAG,
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
  const kubeconfig = flagValue(parsed.value, KUBECONFIG_FLAG) ?? (env.KUBECONFIG || join(homedir(), '.kube', 'config'));
  const access = kubeconfigAccess(kubeconfig, flagValue(parsed.value, CONTEXT_FLAG));
  if (!access.ok) return commandError('check', EXIT.noInput, access.error);
  const webhook = flagValue(parsed.value, WEBHOOK_NAMESPACE_FLAG);
  const node = flagValue(parsed.value, NODE_NAMESPACE_FLAG);
  const namespaces = { ...(webhook === undefined ? {} : { webhook }), ...(node === undefined ? {} : { node }) };
  const snapshot = await readInstall(getter(access.value), access.value, namespaces, now());
  const results = runChecks(snapshot);
  const failed = results.some((result) => result.status === 'fail');
  return {
    exitCode: failed ? EXIT.checkFailed : EXIT.pass,
    stdout: renderChecks(snapshot, results, flagValue(parsed.value, CHECK_OUTPUT_FLAG)),
    stderr: '',
  };
}
