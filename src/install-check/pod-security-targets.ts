import { DEFAULT_IMAGE, readsPodInfo, validatorContainer } from '../inject/validator-container.js';
import { podinfoVolume } from '../inject/podinfo.js';
import { namespaceInjection } from '../inject/mesh-admission.js';
import type { JudgedPod } from '../kube/pod-security-fields.js';
import { POD_SECURITY_LABEL } from '../kube/pod-security-labels.js';
import { meshIdentities, type Mesh } from '../mesh/meshes.js';
import { nodeAgentManifest } from '../node-agent/manifest.js';
import { webhookManifest } from '../webhook/webhook-manifest.js';
import { at, list, record, text } from './json-path.js';
import type { PreflightPlan } from './preflight-snapshot.js';

/** A pod the install will create, and the namespace whose PodSecurity must admit it. */
export interface PodSecurityTarget {
  /** The check's id: `node-agent`, `webhook`, `meshed`. */
  readonly part: 'node-agent' | 'webhook' | 'meshed';
  readonly namespace: string;
  /** The object, as a sentence names it: `DaemonSet interlock-system/interlock-node-linkerd`. */
  readonly object: string;
  readonly pod: JudgedPod;
  /** The install's own Namespace: the command that prints it, and its enforce label there. */
  readonly creates?: { readonly by: string; readonly enforce: string };
  /** What else mends a refusal than relabelling the namespace, for the fix's comment. */
  readonly otherwise?: string;
}

type Document = Record<string, unknown>;
const kindOf = (documents: readonly object[], kind: string): Document | undefined =>
  documents.find((document) => (document as Document)['kind'] === kind) as Document | undefined;

/** The pod template of a printed workload and its Namespace's label, as `manifest` prints them. */
function printedTarget(part: 'node-agent' | 'webhook', documents: readonly object[], kind: string): PodSecurityTarget {
  const workload = kindOf(documents, kind);
  const namespace = text(at(workload, 'metadata', 'namespace')) ?? '';
  const enforce = record(at(kindOf(documents, 'Namespace'), 'metadata', 'labels'))[POD_SECURITY_LABEL.enforce];
  return {
    part,
    namespace,
    object: `${kind} ${namespace}/${text(at(workload, 'metadata', 'name')) ?? ''}`,
    pod: { metadata: at(workload, 'spec', 'template', 'metadata'), spec: at(workload, 'spec', 'template', 'spec') },
    creates: { by: `manifest --${part}`, enforce: enforce ?? 'privileged' },
    otherwise: `or give it a namespace of its own (manifest --${part} --namespace)`,
  };
}

/** The agent's DaemonSet and the webhook's Deployment (the planned ones), printed with the plan's flags. */
export function installTargets(plan: PreflightPlan): PodSecurityTarget[] {
  const image = plan.image ?? DEFAULT_IMAGE;
  const agent = nodeAgentManifest({
    image,
    namespace: plan.nodeNamespace,
    ...(plan.mesh === undefined ? {} : { mesh: plan.mesh }),
  });
  const webhook = webhookManifest({
    image,
    namespace: plan.webhookNamespace,
    failurePolicy: plan.failurePolicy ?? 'Ignore',
    metricsNamespace: plan.webhookNamespace,
  });
  return [
    ...(plan.parts.nodeAgent ? [printedTarget('node-agent', agent, 'DaemonSet')] : []),
    ...(plan.parts.webhook ? [printedTarget('webhook', webhook, 'Deployment')] : []),
  ];
}

/**
 * Whether the mesh puts its proxy (and so Interlock its validator) into the namespace's pods by
 * the namespace's own switch, as src/mesh/ holds them: Linkerd's `linkerd.io/inject` is an
 * annotation, not a label (linkerd/linkerd2 controller/proxy-injector/webhook.go reads the
 * namespace's annotations); Istio's `istio-injection: enabled` and `istio.io/rev` labels (istio/istio
 * manifests/charts/istio-control/istio-discovery/templates/mutatingwebhook.yaml, its
 * namespaceSelector); Kuma's `kuma.io/sidecar-injection` label (kumahq/kuma
 * pkg/plugins/runtime/k8s/metadata/annotations.go); ambient's `istio.io/dataplane-mode: ambient`
 * (test/fixtures/meshes/facts/istio-ambient.json). A pod's own switch is beyond a preflight.
 */
function meshedBy(namespace: unknown, mesh: Mesh): boolean {
  const metadata = at(namespace, 'metadata');
  const captured = meshIdentities().find((identity) => identity.name === mesh)?.capturedPods;
  if (captured) return record(at(metadata, 'labels'))[captured.label] === captured.on;
  return namespaceInjection(metadata as Document)[mesh] === true;
}

/**
 * Interlock's validator, as inject adds it and the ambient webhook writes it, in a pod of its own:
 * for a sidecar mesh the webhook keeps the securityContext the mesh rendered, so what Interlock
 * itself brings is this container, its podinfo volume and nothing at the pod level.
 */
function validatorPod(mesh: Mesh, image: string, rulesCheck: boolean): JudgedPod {
  const container = validatorContainer({ mesh, image, rulesCheck, reportEvent: false });
  return { spec: { initContainers: [container], ...(readsPodInfo(mesh) ? { volumes: [podinfoVolume()] } : {}) } };
}

/**
 * The meshes whose namespaces are judged: the plan's (if it meshes pods at all), else every sidecar
 * mesh; none when nothing planned puts a validator there (neither the webhook nor --rules-check).
 */
export function judgedMeshes(plan: PreflightPlan): Mesh[] {
  if (!plan.parts.webhook && !plan.rulesCheck) return [];
  return meshIdentities()
    .filter(({ name, admission, capturedPods }) =>
      plan.mesh === undefined ? admission !== undefined : name === plan.mesh && (admission ?? capturedPods),
    )
    .map(({ name }) => name);
}

/** Every existing namespace the plan's mesh (or, without --mesh, any sidecar mesh) meshes. */
export function meshedTargets(plan: PreflightPlan, namespaces: unknown): PodSecurityTarget[] {
  const meshes = judgedMeshes(plan);
  return list(at(namespaces, 'items')).flatMap((namespace) =>
    meshes
      .filter((mesh) => meshedBy(namespace, mesh))
      .map((mesh) => {
        const pod = validatorPod(mesh, plan.image ?? DEFAULT_IMAGE, plan.rulesCheck);
        const name = text(at(pod.spec, 'initContainers', 0, 'name')) ?? '';
        return {
          part: 'meshed' as const,
          namespace: text(at(namespace, 'metadata', 'name')) ?? '',
          object: `${mesh}'s pods, to which Interlock adds init container ${name}${plan.rulesCheck ? ' with the rules check' : ''}`,
          pod,
          ...(plan.rulesCheck ? { otherwise: 'or drop --rules-check' } : {}),
        };
      }),
  );
}
