import { writeSync } from 'node:fs';
import { echoValue } from '../config/echo-value.js';
import type { CommandName } from '../config/flag-def.js';
import { EXIT } from '../config/exit-codes.js';
import type { LoadRtNetlink } from '../netlink/read-pod-network.js';
import { quietStreamErrors, writeOutput } from '../output/write-output.js';
import type { InspectRules } from '../validate/rules-port.js';
import type { ProveInterception } from '../validate/run-validate.js';
import { isHelpOrVersionSwitch } from './help-switch.js';
import type { CommandOutcome } from './command-outcome.js';
import { unknownCommand } from './command-error.js';
import { helpWidth } from './help.js';
import { runValidateCommand } from './commands/validate/run.js';

/** Adapters a launcher may substitute (the start-up snapshot loads netlink its own way). */
export interface CliAdapters {
  readonly loadRtNetlink?: LoadRtNetlink;
  readonly inspectRules?: InspectRules;
  readonly proveInterception?: ProveInterception;
}

/** The composition root: wires adapters to the core. `finishCli` and `crashCli` are the only places that exit. */
export async function runCli(argv: readonly string[], adapters: CliAdapters = {}): Promise<CommandOutcome> {
  process.on('uncaughtException', crashCli);
  const [command, ...rest] = argv;
  const width = helpWidth(process.stdout);
  if (command === undefined) return (await import('./help-command.js')).runBare(width, isInteractive());
  if (command === 'help' || command === '--help' || command === '-h')
    return (await import('./help-command.js')).runHelp(rest, width);
  if (command === '--version') return (await import('./commands/version/run.js')).runVersion(rest);
  const foreign = command === 'validate' ? rest : argv;
  if (mayBeForeignValidatorArgv(foreign)) {
    const compat = await runCompat(foreign, adapters, width);
    if (compat) return compat;
  }
  // Only a run that holds a switch loads the refusal and the help: neither is in the start-up snapshot.
  if (rest.some(isHelpOrVersionSwitch)) {
    const refused =
      command === 'validate'
        ? (await import('./commands/validate/switch-refusal.js')).validateSwitchRefusal(rest, process.env, width)
        : undefined;
    if (refused) return refused;
    const answer = (await import('./help-command.js')).helpOrVersion(command, rest, width);
    if (answer) return answer;
  }
  const run = Object.hasOwn(RUNNERS, command) ? RUNNERS[command as CommandName] : undefined;
  if (run) return run(rest, adapters);
  return unknownCommand(command);
}

type Runner = (argv: readonly string[], adapters: CliAdapters) => Promise<CommandOutcome>;

/**
 * Each command's module, loaded only when it runs: validate's path alone is in the start-up
 * snapshot, every other module named here is in scripts/build-snapshot.mjs's `onDemand`.
 */
const RUNNERS: Readonly<Record<CommandName, Runner>> = {
  validate: async (argv, adapters) =>
    runValidateCommand(argv, process.env, abortOnSignals(), { inspectRules, ...adapters }),
  explain: async (argv) => (await import('./commands/explain/run.js')).runExplain(argv, process.env),
  manifest: async (argv) => (await import('./commands/manifest/run.js')).runManifest(argv, process.env),
  inject: async (argv) => (await import('./commands/inject/run.js')).runInject(argv, process.env),
  node: async (argv) => (await import('./commands/node/run.js')).runNodeCommand(argv, process.env, abortOnSignals()),
  'cni-check': async (argv) =>
    (await import('./commands/cni-check/run.js')).runCniCheck(argv, process.env, abortOnSignals()),
  webhook: async (argv) =>
    (await import('./commands/webhook/run.js')).runWebhookCommand(argv, process.env, abortOnSignals()),
  check: async (argv) => (await import('./commands/check/run.js')).runCheck(argv, process.env),
  version: async (argv) => (await import('./commands/version/run.js')).runVersion(argv),
  completion: async (argv) => (await import('./help-command.js')).runCompletion(argv),
};

/**
 * A person at a terminal, as kubectl's users are. A container (no terminal) that runs `interlock`
 * with no command must never exit 0: that exit would start the pod as if it were validated.
 */
function isInteractive(): boolean {
  return process.stdin.isTTY === true && process.stdout.isTTY === true;
}

/** Aborts on the first SIGTERM or SIGINT; a second one exits at once (the kubelet is done waiting). */
function abortOnSignals(): AbortSignal {
  const controller = new AbortController();
  for (const name of ['SIGTERM', 'SIGINT'] as const) {
    process.on(name, () => {
      // A second signal means "now": the kubelet is done waiting.
      if (controller.signal.aborted) process.exit(name === 'SIGINT' ? EXIT.sigint : EXIT.sigterm);
      controller.abort(name);
    });
  }
  return controller.signal;
}

/**
 * A cheap pre-check before loading src/compat: a first word that is not a flag (a program name,
 * a command, a stray word) or one of Linkerd's own flags. src/compat decides, by exact name.
 */
function mayBeForeignValidatorArgv(argv: readonly string[]): boolean {
  const first = argv[0];
  return (
    (first !== undefined && !first.startsWith('-')) || argv.some((arg) => /^--(connect|listen)-addr(=|$)/.test(arg))
  );
}

/**
 * Linkerd's and Istio's validator argv, mapped onto validate (src/compat); a bad option or an
 * unknown program name exits 64 naming it. Undefined: not a drop-in argv. Never re-enters runCli,
 * so no argv can recurse.
 */
async function runCompat(
  foreign: readonly string[],
  adapters: CliAdapters,
  width: number,
): Promise<CommandOutcome | undefined> {
  const identity = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const compat = await import('../compat/compat-argv.js');
  const mapped = compat.compatToValidate(foreign, process.env, identity);
  if (mapped === undefined) return undefined;
  if (!mapped.ok) {
    // A refused mesh argv blocks the pod: it leaves a termination message like any refusal, and
    // a help request still gets the usage, printed instead of a validation.
    const { refuseValidate } = await import('./commands/validate/switch-refusal.js');
    const { asksForHelp } = await import('../compat/foreign-switches.js');
    return refuseValidate(foreign, process.env, mapped.error.message, asksForHelp(foreign) ? width : undefined);
  }
  const [, ...validateArgv] = mapped.value;
  return runValidateCommand(validateArgv, process.env, abortOnSignals(), { inspectRules, ...adapters });
}

/** Loaded on first use so a `--rules off` run never pays for the rules engine. */
const inspectRules: InspectRules = async (spec, options) => {
  const { inspectLiveRules } = await import('../rules-check/inspect.js');
  return inspectLiveRules(spec, options);
};

/** Prints the outcome and exits only once stdout and stderr are flushed; an output error is exit 74. */
export async function finishCli(outcome: CommandOutcome): Promise<void> {
  quietStreamErrors(process.stdout, process.stderr);
  const stdoutError = await writeOutput(process.stdout, outcome.stdout);
  const stderrError = stdoutError ?? (await writeOutput(process.stderr, outcome.stderr));
  if (stdoutError ?? stderrError) {
    lastLine(
      `interlock: output error: ${stdoutError ? 'stdout' : 'stderr'} could not be written (${stdoutError ?? stderrError})`,
    );
    process.exit(EXIT.outputError);
  }
  // Probe sockets may linger in TIME_WAIT handles; the verdict is final, so leave now.
  process.exit(outcome.exitCode);
}

/** A bug: one line, never a raw stack (it would land in logs and termination messages as noise). */
export function crashCli(error: unknown): void {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  lastLine(`interlock: InternalError: ${echoValue(message, 300)}`);
  process.exit(EXIT.internalError);
}

function lastLine(text: string): void {
  try {
    writeSync(2, `${text}\n`);
  } catch {
    // stderr is gone too; the exit code still tells.
  }
}
