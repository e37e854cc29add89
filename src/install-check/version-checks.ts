import { VERSION } from '../config/version.js';
import { at, list, record, text } from './json-path.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import { valueOf, type InstallSnapshot } from './install-snapshot.js';
import { agentKey, agentViews } from './agent-view.js';

/**
 * The images the installed parts run and put in pods, which must be one release: a validator of
 * another version than the agent that trusts it, or than the webhook that injects it, is a
 * half-done upgrade. The recommended version label says which `interlock` printed each part.
 */
export function versionChecks(snapshot: InstallSnapshot): InstallCheckResult[] {
  const webhookPod = at(valueOf(snapshot.deployment), 'spec', 'template', 'spec', 'containers', 0);
  const agents = agentViews(snapshot);
  const injected = list(at(webhookPod, 'args'))
    .map(String)
    .find((arg) => arg.startsWith('--image='))
    ?.slice('--image='.length);
  const images = [
    ['webhook', text(at(webhookPod, 'image'))],
    ['validator the webhook injects', injected],
    ...agents.map((agent) => [
      `node agent ${agentKey(agent)}`,
      text(at(valueOf(agent.daemonSet), 'spec', 'template', 'spec', 'containers', 0, 'image')),
    ]),
  ].filter((entry): entry is [string, string] => entry[1] !== undefined);
  if (images.length === 0) return [];
  const distinct = new Set(images.map(([, image]) => image));
  const listed = images.map(([what, image]) => `${what} ${image}`).join('; ');
  const results = [
    distinct.size === 1
      ? installCheck('versions', 'images', 'pass', `every part runs ${[...distinct][0]}`)
      : installCheck(
          'versions',
          'images',
          'fail',
          `the parts run different images: ${listed}`,
          're-apply every part printed with the same --image',
        ),
  ];
  const printedBy = [snapshot.deployment, ...agents.map((agent) => agent.daemonSet)]
    .map(valueOf)
    .map((object) => record(at(object, 'metadata', 'labels'))['app.kubernetes.io/version'])
    .filter((version): version is string => version !== undefined && version !== VERSION);
  if (printedBy.length > 0)
    results.push(
      installCheck(
        'versions',
        'cli',
        'warn',
        `installed from interlock ${[...new Set(printedBy)].join(', ')}; this CLI is ${VERSION}`,
        'upgrade: re-apply the manifests this CLI prints (docs/operator.md)',
      ),
    );
  return results;
}
