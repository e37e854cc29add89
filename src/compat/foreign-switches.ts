import { fail, type Result } from '../reason/result.js';

/**
 * The meshes' validators answer these switches by printing and exiting 0 without validating
 * (clap's -h/--help/-V/--version in Linkerd's, cobra's -h/--help in istio-iptables). An exit 0
 * from an init container lets the pod start, so a drop-in never maps them onto anything: it
 * refuses them, whatever value pflag or clap would have read.
 */
export function notAVerdict(tool: string, spelling: string, what: 'help' | 'version'): Result<never, 'ConfigInvalid'> {
  return fail(
    'ConfigInvalid',
    `${tool} ${spelling} prints its ${what} and exits 0 without validating: that is not a verdict, so Interlock refuses it (a validator exits 0 only on proof); remove ${spelling} from the container's args`,
  );
}

/** Whether a refused drop-in argv asked for help: the drop-in then prints Interlock's help beside the refusal. */
export function asksForHelp(argv: readonly string[]): boolean {
  return argv.some((arg) => /^(?:--help|-h)(?:=|$)/.test(arg) || /^-h[a-zA-Z]*$/.test(arg));
}
