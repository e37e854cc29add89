import { writeSync } from 'node:fs';
import { echoValue } from '../config/echo-value.js';
import { EXIT } from '../config/exit-codes.js';
import { quietStreamErrors, writeOutput } from '../output/write-output.js';
import type { InspectRules } from '../validate/rules-port.js';
import { isHelpOrVersionSwitch } from './help-switch.js';
import type { CommandOutcome } from './command-outcome.js';
import type { CliAdapters, CommandContext } from './command-spec.js';
import { unknownCommand } from './command-error.js';
import { helpWidth } from './help.js';

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
  const context: CommandContext = {
    env: process.env,
    stopSignal: abortOnSignals,
    adapters: { inspectRules, ...adapters },
  };
  // validate and version run from the start-up blob alone (their rows load the same functions):
  // the command table, with every command's help, is not in the blob. Each is imported when it
  // runs, so help, which reads the table, loads no runner (the blob evaluates both when built).
  if (command === 'validate') return runValidate(rest, context.env, context.stopSignal(), context.adapters);
  if (command === 'version') return (await import('./commands/version/run.js')).runVersion(rest);
  const spec = (await import('./command-table.js')).commandSpec(command);
  if (spec) return (await spec.load())(rest, context);
  return unknownCommand(command);
}

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
  return runValidate(validateArgv, process.env, abortOnSignals(), { inspectRules, ...adapters });
}

/** `interlock validate`, its runner imported only now. */
const runValidate: typeof import('./commands/validate/run.js').runValidateCommand = async (...args) =>
  (await import('./commands/validate/run.js')).runValidateCommand(...args);

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
