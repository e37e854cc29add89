/**
 * Where Interlock's own pods may run and how they pull their image, shared by the node agent's
 * DaemonSet and the webhook's Deployment. The image is built for Linux only (amd64, arm64):
 * on a Windows node its pod could never start, so it is never scheduled there, as istio-cni's
 * and linkerd-cni's node agents are not (test/fixtures/meshes/facts/node-agent-placement.json).
 */
export const LINUX_NODES: Readonly<Record<string, string>> = { 'kubernetes.io/os': 'linux' };

/** The pod's `imagePullSecrets` for the named Secrets of its namespace; nothing when none is named. */
export function pullSecretFields(names: readonly string[] | undefined): { imagePullSecrets?: Array<{ name: string }> } {
  return names === undefined || names.length === 0 ? {} : { imagePullSecrets: names.map((name) => ({ name })) };
}
