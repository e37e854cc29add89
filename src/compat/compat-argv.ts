import type { Result } from '../reason/result.js';
import { ISTIO_IPTABLES_NAME, istioIptablesToValidate } from './istio-iptables.js';
import { LINKERD_VALIDATOR_NAME, LINKERD_VALIDATOR_PATH, linkerdValidatorToValidate } from './linkerd-validator.js';

const LINKERD_ONLY = ['--connect-addr', '--listen-addr'];

export type CompatMode = 'linkerd' | 'istio';

/**
 * Which drop-in mode an argv asks for, if any: Istio's `args: [istio-iptables, ...]` reach the
 * image's entrypoint as they are; Linkerd's `command:` path runs the image's shim, which passes
 * `linkerd2-network-validator` first; bare Linkerd flags are Linkerd's too.
 */
export function compatModeOf(argv: readonly string[]): CompatMode | undefined {
  const first = argv[0] ?? '';
  if (first === ISTIO_IPTABLES_NAME) return 'istio';
  if (first === LINKERD_VALIDATOR_NAME || first === LINKERD_VALIDATOR_PATH) return 'linkerd';
  // --log-format, --log-level and --timeout are Interlock's flags too; these two are Linkerd's alone.
  if (argv.some((arg) => LINKERD_ONLY.includes(arg.split('=')[0] ?? ''))) return 'linkerd';
  return undefined;
}

/** The `interlock validate` argv for a drop-in invocation; undefined when argv is Interlock's own. */
export function compatToValidate(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Result<string[], 'ConfigInvalid'> | undefined {
  const mode = compatModeOf(argv);
  if (mode === 'istio') return istioIptablesToValidate(argv.slice(1), env);
  if (mode === 'linkerd') {
    const first = argv[0] ?? '';
    return linkerdValidatorToValidate(first.startsWith('--') ? argv : argv.slice(1), env);
  }
  return undefined;
}
