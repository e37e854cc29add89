import type { Mesh } from '../mesh/meshes.js';
import type { Found, Get } from './install-snapshot.js';
import { meshCniFacts } from './mesh-cni-facts.js';

/** What an install is about to ask for: `check --pre`'s flags. */
export interface PreflightPlan {
  readonly mesh: Mesh | undefined;
  readonly caBundle: boolean;
  readonly monitoring: boolean;
  readonly failurePolicy: 'Ignore' | 'Fail' | undefined;
  readonly webhookNamespace: string;
  readonly nodeNamespace: string;
  readonly image: string | undefined;
  /** The parts the install prints (`--webhook`, `--node-agent`; neither: both). */
  readonly parts: { readonly webhook: boolean; readonly nodeAgent: boolean };
  /** The meshed pods' validator runs the rules check (uid 0, NET_ADMIN, NET_RAW). */
  readonly rulesCheck: boolean;
}

/** Everything `check --pre` reads, read once; the checks are pure functions of it. */
export interface PreflightSnapshot {
  readonly plan: PreflightPlan;
  readonly namespaces: Found;
  /** The mesh's CNI DaemonSet, by name, in any namespace (a list). */
  readonly cniDaemonSets: Found;
  /** The mesh's own configuration, by name, in any namespace (a list of ConfigMaps). */
  readonly meshConfigs: Found;
  /** cert-manager's controller Deployment, by name, in any namespace (a list). */
  readonly certManagerDeployments: Found;
  /** Discovery of cert-manager.io/v1 and monitoring.coreos.com/v1: 404 when their CRDs are not installed. */
  readonly certManagerApi: Found;
  readonly monitoringApi: Found;
}

const absent: Found = { state: 'absent' };
const byName = (name: string) => ({ fieldSelector: `metadata.name=${name}` });

/** Reads what the preflight needs; discovery, not the CRD objects, so a user without CRD rights can run it. */
export async function readPreflight(get: Get, plan: PreflightPlan): Promise<PreflightSnapshot> {
  const facts = plan.mesh === undefined ? undefined : meshCniFacts(plan.mesh);
  const [namespaces, cniDaemonSets, meshConfigs, certManagerDeployments, certManagerApi, monitoringApi] =
    await Promise.all([
      get('/api/v1/namespaces'),
      facts ? get('/apis/apps/v1/daemonsets', byName(facts.daemonSet)) : absent,
      facts?.config ? get('/api/v1/configmaps', byName(facts.config.configMap)) : absent,
      get('/apis/apps/v1/deployments', byName('cert-manager')),
      plan.caBundle || !plan.parts.webhook ? absent : get('/apis/cert-manager.io/v1'),
      plan.monitoring ? get('/apis/monitoring.coreos.com/v1') : absent,
    ]);
  return { plan, namespaces, cniDaemonSets, meshConfigs, certManagerDeployments, certManagerApi, monitoringApi };
}
