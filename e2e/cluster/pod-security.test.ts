import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meshPods } from '../../scripts/mesh-pods.mjs';
import { podinfoVolume } from '../../src/inject/podinfo.js';
import { validatorContainer } from '../../src/inject/validator-container.js';
import type { PodSecurityLevel } from '../../src/kube/pod-security-check.js';
import { podSecurityLevel } from '../../src/kube/pod-security-level.js';
import { admits } from '../../src/kube/pod-security-labels.js';
import { MESHES } from '../../src/mesh/meshes.js';
import { agentPod, MUTATIONS, webhookPod, type Pod } from '../../test/kube/pod-security-corpus.js';
import { defaultAccount, interlockRun, kubectl } from './cluster.js';

// `check --pre`'s Pod Security Standards evaluator (src/kube/pod-security-*.ts) against the real
// thing: the API server's own PodSecurity admission (Kubernetes v1.33.13). Each pod, Interlock's
// printed ones, the meshes' rendered ones and the webhook's pod with one field broken per check,
// is created with --dry-run=server in a namespace enforcing each level; the API server must admit
// it exactly where the evaluator says the level admits it. Then `check --pre` on a namespace the
// API server refuses the agent in says so.
const LEVELS: readonly PodSecurityLevel[] = ['privileged', 'baseline', 'restricted'];
const namespaceOf = (level: PodSecurityLevel) => `ilk-pss-${level}`;
const AGENT_NS = 'ilk-pss-agent';

/** A pod as the API server would be given it: what PodSecurity does not judge, and other admission refuses, left out. */
function asPod(pod: Pod, name: string, namespace: string): string {
  const spec = structuredClone(pod.spec) as Record<string, unknown>;
  // The ServiceAccount admission refuses a pod naming an account that does not exist; the Priority
  // admission a critical class outside kube-system. Neither is a PodSecurity field.
  delete spec['serviceAccountName'];
  delete spec['serviceAccount'];
  delete spec['priorityClassName'];
  delete spec['priority'];
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec });
}

type Answer = { readonly state: 'admitted' | 'refused' | 'invalid'; readonly message: string };

/** The API server's answer: admitted, refused by PodSecurity, or refused before it (an invalid pod). */
async function admitted(pod: string): Promise<Answer> {
  return kubectl(['create', '--dry-run=server', '-f', '-'], pod).then(
    (out): Answer => ({ state: 'admitted', message: out }),
    (error: unknown): Answer => {
      const message = String(error);
      return { state: /violates PodSecurity/.test(message) ? 'refused' : 'invalid', message };
    },
  );
}

/** The validator in a pod the API server takes as valid: beside the webhook's container (it meets restricted), with its podinfo volume. */
function validatorPod(container: Record<string, unknown>): Pod {
  const { containers, volumes } = webhookPod().spec as { containers: unknown[]; volumes: unknown[] };
  return { spec: { initContainers: [container], containers, volumes: [...volumes, podinfoVolume()] } };
}

/**
 * What API validation (which runs before PodSecurity) requires beside a broken field, so that
 * PodSecurity is what answers: a hostProcess container needs the host network, privileged cannot
 * go with allowPrivilegeEscalation false, an Unmasked procMount needs a user namespace.
 */
const VALID_BESIDE: Readonly<Record<string, (pod: Pod) => void>> = {
  windowsHostProcess: (pod) => void (pod.spec['hostNetwork'] = true),
  privileged: (pod) => {
    const container = (pod.spec['containers'] as Array<{ securityContext: Record<string, unknown> }>)[0]!;
    delete container.securityContext['allowPrivilegeEscalation'];
  },
  procMount: (pod) => void (pod.spec['hostUsers'] = false),
};

function candidates(): Array<{ id: string; pod: Pod }> {
  const validators = MESHES.flatMap((mesh) =>
    [false, true].map((rulesCheck) => ({
      id: `validator ${mesh}${rulesCheck ? ' --rules-check' : ''}`,
      pod: validatorPod(validatorContainer({ mesh, image: 'i', rulesCheck, reportEvent: false })),
    })),
  );
  const rendered = meshPods()
    .filter((pod: { validator?: string }) => pod.validator !== undefined)
    .map((pod: { id: string; pod: unknown }) => ({ id: pod.id, pod: pod.pod as Pod }));
  const broken = MUTATIONS.map(({ check, change }) => {
    const pod = webhookPod();
    change(pod);
    VALID_BESIDE[check]?.(pod);
    return { id: `webhook, ${check} broken`, pod };
  });
  return [
    { id: 'node agent', pod: agentPod({ image: 'i', mesh: 'linkerd' }) },
    { id: 'webhook', pod: webhookPod() },
    ...validators,
    ...rendered,
    ...broken,
  ];
}

beforeAll(async () => {
  for (const level of LEVELS) {
    const namespace = namespaceOf(level);
    await kubectl(['create', 'namespace', namespace, '--dry-run=client', '-o', 'yaml']).then((yaml) =>
      kubectl(['apply', '-f', '-'], yaml),
    );
    await kubectl(['label', 'namespace', namespace, `pod-security.kubernetes.io/enforce=${level}`, '--overwrite']);
    await defaultAccount(namespace);
  }
}, 120_000);
afterAll(async () => {
  for (const namespace of [...LEVELS.map(namespaceOf), AGENT_NS])
    await kubectl(['delete', 'namespace', namespace, '--ignore-not-found', '--wait=false']).catch(() => '');
}, 120_000);

describe("the Pod Security Standards evaluator agrees with the API server's PodSecurity admission", () => {
  it('on every pod, at every level: admitted exactly where the evaluator says the level admits it', async () => {
    const pods = candidates();
    expect(pods.length).toBeGreaterThan(40);
    const disagreements: string[] = [];
    const invalid: string[] = [];
    let refused = 0;
    for (const [index, { id, pod }] of pods.entries()) {
      const needed = podSecurityLevel(pod).level;
      for (const level of LEVELS) {
        const answer = await admitted(asPod(pod, `pss-${index}`, namespaceOf(level)));
        if (answer.state === 'invalid') invalid.push(`${id} in ${level}: ${answer.message}`);
        else if ((answer.state === 'admitted') !== admits(level, needed))
          disagreements.push(`${id} in ${level}: evaluator needs ${needed}, API server: ${answer.message}`);
        if (answer.state === 'refused') refused++;
      }
    }
    console.log(`pss: ${pods.length} pods x ${LEVELS.length} levels, ${refused} refused by PodSecurity`);
    expect(invalid).toEqual([]);
    expect(disagreements).toEqual([]);
    // Both answers happened: the comparison could have failed either way.
    expect(refused).toBeGreaterThan(pods.length / 2);
    expect(refused).toBeLessThan(pods.length * LEVELS.length - pods.length);
  }, 600_000);

  it("check --pre fails where the API server refuses the agent's pods, and passes once the label allows them", async () => {
    await kubectl(['create', 'namespace', AGENT_NS, '--dry-run=client', '-o', 'yaml']).then((yaml) =>
      kubectl(['apply', '-f', '-'], yaml),
    );
    await kubectl(['label', 'namespace', AGENT_NS, 'pod-security.kubernetes.io/enforce=baseline', '--overwrite']);
    await defaultAccount(AGENT_NS);
    const agent = await admitted(asPod(agentPod({ image: 'i', mesh: 'linkerd' }), 'agent', AGENT_NS));
    expect(agent.state).toBe('refused');
    expect(agent.message).toMatch(/violates PodSecurity "baseline:latest": host namespaces \(hostNetwork=true\)/);
    const pre = ['check', '--pre', '--node-agent', '--mesh', 'linkerd', '--node-namespace', AGENT_NS];
    const refused = await interlockRun(pre);
    expect(refused.stdout).toMatch(
      new RegExp(
        `FAIL .*Namespace ${AGENT_NS} enforces PodSecurity baseline: it refuses DaemonSet ${AGENT_NS}/interlock-node-linkerd`,
      ),
    );
    await kubectl(['label', 'namespace', AGENT_NS, 'pod-security.kubernetes.io/enforce=privileged', '--overwrite']);
    expect((await admitted(asPod(agentPod({ image: 'i', mesh: 'linkerd' }), 'agent', AGENT_NS))).state).toBe(
      'admitted',
    );
    const allowed = await interlockRun(pre);
    expect(allowed.stdout).not.toMatch(new RegExp(`FAIL .*Namespace ${AGENT_NS} enforces`));
    expect(allowed.stdout).toMatch(new RegExp(`ok .*Namespace ${AGENT_NS}`));
  }, 120_000);
});
