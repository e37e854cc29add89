import { describe, expect, it } from 'vitest';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';

// What --node-agent and --webhook print owns its Namespace: kubectl apply relabels it (the agent's
// PodSecurity privileged) and kubectl delete -f deletes it with everything in it.
describe('manifest refuses a --namespace Interlock does not own', () => {
  const namespaces = [
    'default',
    'kube-system',
    'kube-public',
    'istio-system',
    'linkerd',
    'kuma-system',
    'cert-manager',
  ];
  for (const mode of [['--node-agent', '--mesh', 'linkerd'], ['--webhook']])
    for (const namespace of namespaces)
      it(`${mode[0]} --namespace ${namespace}: exit 64, nothing printed, the reason named`, async () => {
        const outcome = await runManifest([...mode, '--namespace', namespace], {});
        expect(outcome.exitCode).toBe(64);
        expect(outcome.stdout).toBe('');
        expect(outcome.stderr).toContain(`--namespace ${namespace}`);
        expect(outcome.stderr).toMatch(/kubectl delete -f/);
      });

  it("takes a namespace of its own, and --rbac takes the pods' namespace, default included", async () => {
    expect((await runManifest(['--node-agent', '--mesh', 'linkerd', '--namespace', 'mesh-guard'], {})).exitCode).toBe(
      0,
    );
    expect((await runManifest(['--rbac', '--namespace', 'default'], {})).exitCode).toBe(0);
  });
});
