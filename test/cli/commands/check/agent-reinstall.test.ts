import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';
import { agentReinstall } from '../../../../src/install-check/agent-mesh-check.js';
import type { AgentView } from '../../../../src/install-check/agent-view.js';
import { expectPasteable } from '../../../harness/fix-line.js';

type DaemonSet = { kind: string; spec: { template: { spec: { containers: Array<{ args: string[] }> } } } };

async function daemonSet(argv: string[]): Promise<DaemonSet> {
  const outcome = await runManifest(argv, {});
  expect(outcome.exitCode, outcome.stderr).toBe(0);
  return parseAllDocuments(outcome.stdout)
    .map((document) => document.toJS() as DaemonSet)
    .find((object) => object.kind === 'DaemonSet')!;
}

const words = (line: string) =>
  line
    .replace(/ \| kubectl apply -f -$/, '')
    .split(' ')
    .slice(2);

// check's fix for the node agent prints it again as installed: the same DaemonSet, flags and all.
describe("check's reinstall line for the node agent", () => {
  it.each([
    ['--node-agent', '--mesh', 'linkerd', '--image', 'registry.example/i:1', '--namespace', 'agents'],
    [
      '--node-agent',
      '--mesh',
      'istio',
      '--image',
      'registry.example/i:2',
      '--namespace',
      'ops',
      '--cni-audit',
      '--taint',
    ],
    ['--node-agent', '--mesh', 'kuma', '--image', 'registry.example/i:3', '--namespace', 'k', '--action', 'label'],
  ])('%j: pasteable, and it prints the installed DaemonSet again', async (...argv) => {
    const installed = await daemonSet(argv);
    const namespace = argv[argv.indexOf('--namespace') + 1]!;
    const snapshot = {
      daemonSet: { state: 'found', value: installed },
      nodeNamespace: namespace,
    } as unknown as AgentView;
    const line = agentReinstall(snapshot);
    await expectPasteable(line);
    expect(line).not.toMatch(/\[|MESH|IMAGE/);
    expect(await daemonSet(words(line))).toEqual(installed);
  });
});
