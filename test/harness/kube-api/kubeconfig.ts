import { writeFileSync } from 'node:fs';

/** A kubeconfig whose only cluster is the stand-in, over plain HTTP, for the agent and for kubectl. */
export function kubeconfigFor(url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: stand-in\n  cluster:\n    server: ${url}`,
    'users:',
    '- name: agent\n  user:\n    token: stand-in-token',
    'contexts:',
    '- name: stand-in\n  context:\n    cluster: stand-in\n    user: agent\n    namespace: default',
    'current-context: stand-in',
    '',
  ].join('\n');
}

export function writeKubeconfig(path: string, url: string): string {
  writeFileSync(path, kubeconfigFor(url), { mode: 0o600 });
  return path;
}
