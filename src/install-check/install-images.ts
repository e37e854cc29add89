import { at, list, text } from './json-path.js';
import { imageRepository } from './image-reference.js';
import { valueOf, type InstallSnapshot } from './install-snapshot.js';

const argValues = (args: readonly string[], name: string): string[] =>
  args.flatMap((arg, index) => {
    if (arg.startsWith(`--${name}=`)) return [arg.slice(name.length + 3)];
    return arg === `--${name}` && args[index + 1] !== undefined ? [args[index + 1] ?? ''] : [];
  });

/**
 * The images the install stands for: the validator image the webhook injects (else the first
 * part's own, the one release), and every repository Interlock's parts (each agent too) run or
 * trust, by which a pod's validator is known to be Interlock's and not the mesh's own. `check --data-plane --image` names
 * the image where no part is installed (pods injected by `inject` alone), and wins over the parts'.
 */
export function installImages(snapshot: InstallSnapshot): {
  readonly expected: string | undefined;
  readonly repositories: ReadonlySet<string>;
} {
  const webhook = at(valueOf(snapshot.deployment), 'spec', 'template', 'spec', 'containers', 0);
  const agents = snapshot.agents.map((agent) =>
    at(valueOf(agent.daemonSet), 'spec', 'template', 'spec', 'containers', 0),
  );
  const webhookArgs = list(at(webhook, 'args')).map(String);
  const agentArgs = agents.flatMap((agent) => list(at(agent, 'args')).map(String));
  const injected = argValues(webhookArgs, 'image')[0];
  const own = [webhook, ...agents].flatMap((container) => text(at(container, 'image')) ?? []);
  const trusted = [...argValues(webhookArgs, 'trusted-image'), ...argValues(agentArgs, 'trusted-image')];
  const given = snapshot.dataPlane?.image;
  const expected = given ?? injected ?? own[0];
  const all = [...(expected === undefined ? [] : [expected]), ...own, ...trusted];
  return { expected, repositories: new Set(all.map(imageRepository)) };
}
