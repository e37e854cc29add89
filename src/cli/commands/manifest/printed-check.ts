import { containerEnv, containerValidatorConfig } from '../../../compat/validator-config.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { nodeConfigOf } from '../node/config.js';
import { WEBHOOK_COMMAND_FLAGS } from '../webhook/flags.js';

type Json = Record<string, unknown>;

const obj = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const strings = (value: unknown): string[] => list(value).map(String);

/**
 * Why the command a printed container runs would refuse its configuration (exit 64), or
 * undefined: `interlock node` and `interlock webhook` by their own configuration check, anything
 * else (the validator, Interlock's or a drop-in's argv) by validate's.
 */
function printedContainerRefusal(container: Json): string | undefined {
  const command = container.command === undefined ? undefined : strings(container.command);
  const args = strings(container.args);
  const env = containerEnv(list(container.env));
  if (command?.length === 1 && command[0] === 'interlock' && args[0] === 'node') {
    const node = nodeConfigOf(args.slice(1), env);
    return typeof node === 'string' ? `interlock node would refuse it: ${node}` : undefined;
  }
  if (command?.length === 1 && command[0] === 'interlock' && args[0] === 'webhook') {
    const webhook = parseCommandLine('webhook', args.slice(1), env, WEBHOOK_COMMAND_FLAGS);
    return webhook.ok ? undefined : `interlock webhook would refuse it: ${webhook.error.message}`;
  }
  const validator = containerValidatorConfig(container);
  return validator.ok ? undefined : `the validator would refuse it and exit 64: ${validator.error.message}`;
}

/** Every container a printed document holds: a workload's pod template, or the document itself when it is a container. */
function printedContainers(document: Json): Json[] {
  const template = obj(obj(obj(document.spec).template).spec);
  const pod = document.kind === 'Pod' ? obj(document.spec) : template;
  const inPod = [...list(pod.initContainers), ...list(pod.containers)].map(obj);
  if (inPod.length > 0) return inPod;
  return document.kind === undefined && typeof document.image === 'string' ? [document] : [];
}

/** The first refusal among the printed documents' containers, naming the container. */
export function printedRefusal(documents: readonly Json[]): string | undefined {
  for (const document of documents)
    for (const container of printedContainers(document)) {
      const refusal = printedContainerRefusal(container);
      if (refusal) return `container ${String(container.name)}: ${refusal}`;
    }
  return undefined;
}
