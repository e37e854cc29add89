import { parseCommandLine } from '../config/parse-command-line.js';
import { buildValidateConfig, VALIDATE_FLAGS, type ValidateConfig } from '../config/validate-config.js';
import { ok, type Result } from '../reason/result.js';
import type { Mesh } from '../mesh/meshes.js';
import { compatModeOf, compatToValidate } from './compat-argv.js';
import type { ProcessIdentity } from './istio-iptables.js';

type Env = Readonly<Record<string, string | undefined>>;

/** What a validator container would run with, and whether it came through a drop-in's argv. */
export interface ValidatorInvocation {
  readonly config: ValidateConfig;
  readonly dropIn: Mesh | undefined;
  /** validate's own argv (the drop-in's mapped). */
  readonly argv: readonly string[];
}

/**
 * The configuration a validator container gets: `command` undefined runs the image's entrypoint
 * (`interlock validate` + args), a drop-in path runs the image's shim (src/compat maps its argv),
 * exactly as runCli and runValidateCommand do, minus the pod's downward-API files (read at run
 * time only). The printers check what they print with it, and the node agent what a pod runs:
 * one parser, so nothing printed is refused by the command it runs.
 */
export function validatorConfigOf(
  command: readonly string[] | undefined,
  args: readonly string[],
  env: Env,
  identity?: ProcessIdentity,
): Result<ValidatorInvocation, 'ConfigInvalid'> {
  const words = [...(command ?? []), ...args];
  const mapped = compatToValidate(words, env, identity);
  if (mapped && !mapped.ok) return mapped;
  const argv = mapped ? mapped.value.slice(1) : args;
  const parsed = parseCommandLine('validate', argv, env, VALIDATE_FLAGS);
  if (!parsed.ok) return parsed;
  const config = buildValidateConfig(parsed.value);
  if (!config.ok) return config;
  return ok({ config: config.value, dropIn: mapped ? compatModeOf(words) : undefined, argv });
}

type Json = Record<string, unknown>;
const obj = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/**
 * The environment a container's process gets from its `env` entries: literal values as they are;
 * a downward-API value (`valueFrom`) stands for what the kubelet fills in (a name), never empty.
 */
export function containerEnv(entries: readonly unknown[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries.map(obj)) {
    if (typeof entry.name !== 'string') continue;
    env[entry.name] = typeof entry.value === 'string' ? entry.value : `downward-api-${entry.name.toLowerCase()}`;
  }
  return env;
}

/** The uid and gid a container runs as, when its securityContext says (Istio's drop-in reads the proxy's gid from it). */
export function containerIdentity(container: Json): ProcessIdentity | undefined {
  const context = obj(container.securityContext);
  if (typeof context.runAsUser !== 'number') return undefined;
  return {
    uid: context.runAsUser,
    gid: typeof context.runAsGroup === 'number' ? context.runAsGroup : context.runAsUser,
  };
}

/** validatorConfigOf for a container as Kubernetes data: its command, args, env and securityContext. */
export function containerValidatorConfig(container: Json): Result<ValidatorInvocation, 'ConfigInvalid'> {
  const command = container.command === undefined || container.command === null ? undefined : list(container.command);
  return validatorConfigOf(
    command?.map(String),
    list(container.args).map(String),
    containerEnv(list(container.env)),
    containerIdentity(container),
  );
}
