/**
 * What a kubelet `FailedCreatePodSandBox` Event says about the mesh's CNI plugin. The kubelet
 * writes `Failed to create pod sandbox: <the runtime's error>` (pkg/kubelet/kuberuntime); containerd
 * wraps the CNI error as `failed to setup network for sandbox "ID": ...` and libcni names the plugin
 * that failed as `plugin type="T" name="N" failed (add): <the plugin's message>`. Under Multus the
 * delegate is named as `error adding container to network "N": ...`. Shapes and sources:
 * test/fixtures/kube/sandbox-events.json.
 */
export const SANDBOX_FAILED_REASON = 'FailedCreatePodSandBox';

/** Why the plugin failed, as a closed set: the metric's label is never the message (a plugin's own text). */
export const PLUGIN_FAILURE_CAUSES = [
  'plugin-missing',
  'tool-missing',
  'agent-unreachable',
  'timeout',
  'rules-failed',
  'other',
] as const;
export type PluginFailureCause = (typeof PLUGIN_FAILURE_CAUSES)[number];

export interface PluginFailure {
  readonly cause: PluginFailureCause;
  /** The plugin's own message (after `failed (add): `), as the runtime passed it on. */
  readonly detail: string;
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Ordered: the first that matches names the cause (a missing `nft` is a missing tool, not a rules error). */
const CAUSES: readonly (readonly [PluginFailureCause, RegExp])[] = [
  ['plugin-missing', /failed to find plugin /],
  ['tool-missing', /executable file not found|no such file or directory|exit status 127|command not found/],
  [
    'agent-unreachable',
    /failed to contact|connection refused|no ztunnel connection|unable to push cni event|dial unix/,
  ],
  ['timeout', /deadline exceeded|timed out|timeout/],
  ['rules-failed', /iptables|ip6tables|nft|firewall|exit status \d+/],
];

function causeOf(detail: string): PluginFailureCause {
  const lower = detail.toLowerCase();
  return CAUSES.find(([, pattern]) => pattern.test(lower))?.[0] ?? 'other';
}

/**
 * The mesh plugin's failure named in `message`, or undefined when the message names another plugin
 * (a primary CNI's failure is not the mesh's) or no plugin at all.
 */
export function pluginFailureOf(message: string, plugin: string): PluginFailure | undefined {
  const name = escape(plugin);
  const chained = new RegExp(`plugin type="${name}"(?: name="[^"]*")? failed \\(add\\): `).exec(message);
  const delegated = new RegExp(`error adding container to network "${name}": `).exec(message);
  const found = chained ?? delegated;
  if (!found) return undefined;
  const detail = message.slice(found.index + found[0].length).trim();
  return { cause: causeOf(detail), detail };
}
