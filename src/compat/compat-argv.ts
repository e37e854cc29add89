import { echoValue } from '../config/echo-value.js';
import { fail, type Result } from '../reason/result.js';
import { dropInProgram, dropInProgramNames, looksLikeProgramName, type CompatMode } from './drop-in-programs.js';
import { istioIptablesToValidate, type ProcessIdentity } from './istio-iptables.js';
import { linkerdValidatorToValidate } from './linkerd-validator.js';

export type { CompatMode } from './drop-in-programs.js';

const LINKERD_ONLY = ['--connect-addr', '--listen-addr'];

/**
 * Which drop-in mode an argv asks for, if any: Istio's `args: [istio-iptables, ...]` reach the
 * image's entrypoint as they are; Linkerd's `command:` path runs the image's shim, which passes
 * `linkerd2-network-validator` first; bare Linkerd flags are Linkerd's too.
 */
export function compatModeOf(argv: readonly string[]): CompatMode | undefined {
  const program = dropInProgram(argv[0] ?? '');
  if (program) return program;
  // --log-format, --log-level and --timeout are Interlock's flags too; these two are Linkerd's alone.
  if (argv.some((arg) => LINKERD_ONLY.includes(arg.split('=')[0] ?? ''))) return 'linkerd';
  return undefined;
}

/**
 * The `interlock validate` argv for a drop-in invocation; undefined when argv is Interlock's own.
 * A first word that looks like a program name but is none of the drop-in names is refused here,
 * once, so no caller can loop on it.
 */
export function compatToValidate(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  identity?: ProcessIdentity,
): Result<string[], 'ConfigInvalid'> | undefined {
  const mode = compatModeOf(argv);
  const first = argv[0] ?? '';
  if (mode === undefined) {
    if (!looksLikeProgramName(first)) return undefined;
    return fail(
      'ConfigInvalid',
      `unknown program name "${echoValue(first)}": Interlock stands in for ${dropInProgramNames().join(', ')} only`,
    );
  }
  if (mode === 'istio') return istioIptablesToValidate(argv.slice(1), env, identity);
  return linkerdValidatorToValidate(first.startsWith('--') ? argv : argv.slice(1), env);
}
