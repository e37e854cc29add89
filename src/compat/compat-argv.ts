import { echoValue } from '../config/echo-value.js';
import type { DropInArgv } from '../mesh/mesh-identity.js';
import { dropInMeshes, meshIdentity, type Mesh } from '../mesh/meshes.js';
import { fail, type Result } from '../reason/result.js';
import { dropInProgram, dropInProgramNames, looksLikeProgramName } from './drop-in-programs.js';
import { istioIptablesToValidate, type ProcessIdentity } from './istio-iptables.js';
import { kumactlValidatorToValidate } from './kumactl-validator.js';
import { linkerdValidatorToValidate } from './linkerd-validator.js';

type Env = Readonly<Record<string, string | undefined>>;
type ArgvMapping = (
  argv: readonly string[],
  env: Env,
  identity: ProcessIdentity | undefined,
) => Result<string[], 'ConfigInvalid'>;

/**
 * Each argv shape a mesh module names (src/mesh/), mapped: Istio's args always start with the
 * program name; Linkerd's start with it unless they are bare flags.
 */
const MAPPINGS: Readonly<Record<DropInArgv, ArgvMapping>> = {
  'istio-iptables': (argv, env, identity) => istioIptablesToValidate(argv.slice(1), env, identity),
  'linkerd2-network-validator': (argv, env) =>
    linkerdValidatorToValidate((argv[0] ?? '').startsWith('--') ? argv : argv.slice(1), env),
  kumactl: (argv) => kumactlValidatorToValidate(argv),
};

/**
 * Which mesh's drop-in an argv asks for, if any: Istio's `args: [istio-iptables, ...]` reach the
 * image's entrypoint as they are; Linkerd's `command:` path runs the image's shim, which passes
 * `linkerd2-network-validator` first; flags only one mesh's validator takes are that mesh's too.
 */
export function compatModeOf(argv: readonly string[]): Mesh | undefined {
  const program = dropInProgram(argv[0] ?? '');
  if (program) return program;
  const names = argv.map((arg) => arg.split('=')[0] ?? '');
  return dropInMeshes().find(({ dropIn }) => names.some((name) => dropIn.ownFlags.includes(name)))?.mesh;
}

/**
 * The `interlock validate` argv for a drop-in invocation; undefined when argv is Interlock's own.
 * A first word that looks like a program name but is none of the drop-in names is refused here,
 * once, so no caller can loop on it.
 */
export function compatToValidate(
  argv: readonly string[],
  env: Env,
  identity?: ProcessIdentity,
): Result<string[], 'ConfigInvalid'> | undefined {
  const mesh = compatModeOf(argv);
  const first = argv[0] ?? '';
  const dropIn = mesh === undefined ? undefined : meshIdentity(mesh).dropIn;
  if (dropIn === undefined) {
    if (!looksLikeProgramName(first)) return undefined;
    return fail(
      'ConfigInvalid',
      `unknown program name "${echoValue(first)}": Interlock stands in for ${dropInProgramNames().join(', ')} only`,
    );
  }
  return MAPPINGS[dropIn.argv](argv, env, identity);
}
