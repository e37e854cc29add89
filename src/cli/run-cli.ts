import { EXIT } from '../config/exit-codes.js';
import type { LoadRtNetlink } from '../netlink/read-pod-network.js';
import type { InspectRules } from '../validate/rules-port.js';
import { TOP_HELP } from './help.js';
import type { CommandResult } from './command-result.js';
import { runValidateCommand } from './run-validate-command.js';
import { VERSION } from './version.js';

/** Adapters a launcher may substitute (the start-up snapshot loads netlink its own way). */
export interface CliAdapters {
  readonly loadRtNetlink?: LoadRtNetlink;
}

/**
 * The composition root: wires adapters to the core. `finishCli` is the only place that exits.
 */
export async function runCli(argv: readonly string[], adapters: CliAdapters = {}): Promise<CommandResult> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    return { exitCode: command === undefined ? EXIT.invalidConfig : 0, stdout: command === undefined ? '' : TOP_HELP, stderr: command === undefined ? TOP_HELP : '' };
  }
  if (command === '--version' || command === 'version') return { exitCode: 0, stdout: `${VERSION}\n`, stderr: '' };
  const foreign = command === 'validate' ? rest : argv;
  if (/^(istio-iptables|linkerd2-network-validator|\/usr\/lib\/linkerd\/)/.test(foreign[0] ?? '') || foreign.some((arg) => /^--(connect|listen)-addr(=|$)/.test(arg))) return runCompat(foreign, adapters);
  if (command === 'validate') {
    const controller = new AbortController();
    for (const name of ['SIGTERM', 'SIGINT'] as const) {
      process.on(name, () => {
        // A second signal means "now": the kubelet is done waiting.
        if (controller.signal.aborted) process.exit(name === 'SIGINT' ? EXIT.sigint : EXIT.sigterm);
        controller.abort(name);
      });
    }
    return runValidateCommand(rest, process.env, controller.signal, inspectRules, adapters.loadRtNetlink);
  }
  if (command === 'node') { const { runNodeCommand, processStopSignal } = await import('./node-command.js'); return runNodeCommand(rest, process.env, processStopSignal()); }
  if (command === 'explain') {
    const { runExplain } = await import('./explain-command.js');
    return runExplain(rest, process.env);
  }
  if (command === 'inject') return (await import('./inject-command.js')).runInject(rest, process.env);
  if (command === 'manifest') return (await import('./manifest-command.js')).runManifest(rest, process.env);
  return { exitCode: EXIT.invalidConfig, stdout: '', stderr: `interlock: unknown command ${JSON.stringify(command)}\n\n${TOP_HELP}` };
}

/** Linkerd's and Istio's validator argv, mapped onto validate (src/compat); a bad option exits 64 naming it. */
async function runCompat(foreign: readonly string[], adapters: CliAdapters): Promise<CommandResult> {
  const mapped = (await import('../compat/compat-argv.js')).compatToValidate(foreign, process.env);
  if (mapped === undefined || mapped.ok) return runCli(mapped?.value ?? ['validate', ...foreign], adapters);
  return { exitCode: EXIT.invalidConfig, stdout: '', stderr: `interlock: ConfigInvalid: ${mapped.error.message}\n` };
}

/** Loaded on first use so a `--rules off` run never pays for the rules engine. */
const inspectRules: InspectRules = async (spec, options) => {
  const { inspectLiveRules } = await import('../rules-check/inspect.js');
  return inspectLiveRules(spec, options);
};

export function finishCli(result: CommandResult): void {
  if (result.stdout) process.stdout.write(result.stdout);
  if (result.stderr) process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
  // Probe sockets may linger in TIME_WAIT handles; the verdict is final, so leave now.
  setImmediate(() => process.exit(result.exitCode));
}

export function crashCli(error: unknown): void {
  process.stderr.write(`interlock: internal error: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(EXIT.internalError);
}
