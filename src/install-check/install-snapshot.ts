import type { ClusterAccess } from '../kube/cluster-access.js';
import { kubeRequest } from '../kube/request.js';
import { NODE_AGENT_NAME } from '../node-agent/manifest.js';
import type { LostReason } from '../node-agent/recheck/pod-capture.js';
import { WEBHOOK_CONFIGURATION_NAME, WEBHOOK_NAME, WEBHOOK_TLS_SECRET } from '../webhook/webhook-manifest.js';
import { at, list, text } from './json-path.js';

/** The pods `check` reads for the validators they run: one page, said when there are more. */
export const MESH_POD_PAGE = 500;

/** What one GET found: the object, nothing (404), a refusal (401/403) or an error. */
export type Found =
  | { readonly state: 'found'; readonly value: unknown }
  | { readonly state: 'absent' }
  | { readonly state: 'forbidden'; readonly detail: string }
  | { readonly state: 'error'; readonly detail: string };

/** One node agent: its DaemonSet (or why the DaemonSets could not be listed) and the pods its selector selects. */
export interface AgentFound {
  readonly namespace: string;
  readonly daemonSet: Found;
  readonly pods: Found;
}

/** Everything `interlock check` reads, read once; the checks are pure functions of it. */
export interface InstallSnapshot {
  readonly now: Date;
  readonly server: string;
  readonly origin: string;
  readonly version: Found;
  readonly namespaces: Found;
  readonly webhookNamespace: string;
  readonly configuration: Found;
  readonly service: Found;
  readonly endpoints: Found;
  readonly deployment: Found;
  readonly tlsSecret: Found;
  /** Where a node agent is installed when none runs: `--node-namespace`, else the first agent's, else the default. */
  readonly nodeNamespace: string;
  /** Where the agents were looked for: `in namespace NS` (`--node-namespace`) or `in any namespace`. */
  readonly agentScope: string;
  /** Every node agent found (one per mesh may run), by namespace and name; one unread entry when the list failed. */
  readonly agents: readonly AgentFound[];
  readonly nodes: Found;
  readonly clusterRoles: Found;
  readonly clusterRoleBindings: Found;
  /** Read only when the data-plane checks are asked for: every pod, and the re-check's Warnings. */
  readonly dataPlane?: { readonly pods: Found; readonly lostEvents: readonly Found[]; readonly image?: string };
  /** The cluster's pods (one page), for the validators they run; undefined: not read. */
  readonly meshPods?: Found;
}

const TIMEOUT_MS = 10_000;

export type Get = (path: string, query?: Readonly<Record<string, string>>) => Promise<Found>;

export function getter(access: ClusterAccess): Get {
  return async (path, query) => {
    const answer = await kubeRequest(access, {
      method: 'GET',
      path,
      timeoutMs: TIMEOUT_MS,
      ...(query ? { query } : {}),
    });
    if (!answer.ok) return { state: 'error', detail: answer.error.message };
    const { status, body } = answer.value;
    if (status === 200) return { state: 'found', value: body };
    if (status === 404) return { state: 'absent' };
    const detail = `GET ${path}: ${status} ${text(at(body, 'message')) ?? answer.value.text.slice(0, 200)}`;
    return status === 401 || status === 403 ? { state: 'forbidden', detail } : { state: 'error', detail };
  };
}

export const valueOf = (found: Found): unknown => (found.state === 'found' ? found.value : undefined);

const AGENT_SELECTOR = `app.kubernetes.io/name=${NODE_AGENT_NAME}`;

/** That agent's pods: its DaemonSet's own selector, so another mesh's agent's pods are not counted. */
export function podSelector(daemonSet: Found): string {
  const labels = at(valueOf(daemonSet), 'spec', 'selector', 'matchLabels');
  const pairs = labels !== null && typeof labels === 'object' ? Object.entries(labels) : [];
  return pairs.length > 0 ? pairs.map(([key, value]) => `${key}=${String(value)}`).join(',') : AGENT_SELECTOR;
}

/**
 * Reads the install. The namespaces are the flags', else where the installed objects say they are
 * (the webhook configuration's Service, the node agent's DaemonSet), else the manifests' defaults.
 */
export async function readInstall(
  get: Get,
  access: Pick<ClusterAccess, 'server' | 'origin'>,
  namespaces: { readonly webhook?: string; readonly node?: string },
  now: Date,
  dataPlane = false,
  image?: string,
): Promise<InstallSnapshot> {
  const version = await get('/version');
  const base = { now, server: access.server, origin: access.origin, version };
  const configuration = await get(
    `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${WEBHOOK_CONFIGURATION_NAME}`,
  );
  const webhookNamespace =
    namespaces.webhook ??
    text(at(valueOf(configuration), 'webhooks', 0, 'clientConfig', 'service', 'namespace')) ??
    'interlock-webhook';
  const agentsFound = await readAgents(get, namespaces.node);
  const w = `/api/v1/namespaces/${webhookNamespace}`;
  const [namespaceList, service, endpoints, deployment, tlsSecret] = await Promise.all([
    get('/api/v1/namespaces'),
    get(`${w}/services/${WEBHOOK_NAME}`),
    get(`${w}/endpoints/${WEBHOOK_NAME}`),
    get(`/apis/apps/v1/namespaces/${webhookNamespace}/deployments/${WEBHOOK_NAME}`),
    get(`${w}/secrets/${WEBHOOK_TLS_SECRET}`),
  ]);
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const [nodes, clusterRoles, clusterRoleBindings, meshPods] = await Promise.all([
    get('/api/v1/nodes'),
    get(`${rbac}/clusterroles`),
    get(`${rbac}/clusterrolebindings`),
    get('/api/v1/pods', { limit: String(MESH_POD_PAGE) }),
  ]);
  return {
    ...base,
    ...(dataPlane ? { dataPlane: { ...(await readDataPlane(get)), ...(image === undefined ? {} : { image }) } } : {}),
    namespaces: namespaceList,
    webhookNamespace,
    configuration,
    service,
    endpoints,
    deployment,
    tlsSecret,
    ...agentsFound,
    nodes,
    clusterRoles,
    clusterRoleBindings,
    meshPods,
  };
}

/**
 * Every node agent (one per mesh may run): the DaemonSets labelled as Interlock's node agent in the
 * cluster, or in `--node-namespace`; when they cannot be listed, one agent standing for the failure.
 */
async function readAgents(
  get: Get,
  namespace: string | undefined,
): Promise<Pick<InstallSnapshot, 'nodeNamespace' | 'agentScope' | 'agents'>> {
  const where = namespace === undefined ? '' : `/namespaces/${namespace}`;
  const listed = await get(`/apis/apps/v1${where}/daemonsets`, { labelSelector: AGENT_SELECTOR });
  const daemonSets = sortedItems(listed);
  const nodeNamespace = namespace ?? text(at(daemonSets[0], 'metadata', 'namespace')) ?? 'interlock-system';
  const agentScope = namespace === undefined ? 'in any namespace' : `in namespace ${namespace}`;
  if (listed.state === 'forbidden' || listed.state === 'error')
    return { nodeNamespace, agentScope, agents: [{ namespace: nodeNamespace, daemonSet: listed, pods: listed }] };
  return { nodeNamespace, agentScope, agents: await Promise.all(daemonSets.map((item) => readAgent(get, item))) };
}

/** The agents' DaemonSets listed, by namespace and name, so the report's order is the same on each run. */
function sortedItems(found: Found): unknown[] {
  const key = (item: unknown) =>
    `${text(at(item, 'metadata', 'namespace')) ?? ''}/${text(at(item, 'metadata', 'name')) ?? ''}`;
  return list(at(valueOf(found), 'items')).sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** One agent: its DaemonSet and its pods, by its own selector (another mesh's agent's pods are not its). */
async function readAgent(get: Get, item: unknown): Promise<AgentFound> {
  const namespace = text(at(item, 'metadata', 'namespace')) ?? '';
  const daemonSet: Found = { state: 'found', value: item };
  const pods = await get(`/api/v1/namespaces/${namespace}/pods`, { labelSelector: podSelector(daemonSet) });
  return { namespace, daemonSet, pods };
}

/** Every pod (as `linkerd check --proxy` reads them) and the node agent's re-check Warnings, by reason. */
async function readDataPlane(get: Get): Promise<NonNullable<InstallSnapshot['dataPlane']>> {
  const reasons: readonly LostReason[] = ['CaptureLost', 'ZtunnelNotListening'];
  const [pods, ...lostEvents] = await Promise.all([
    get('/api/v1/pods'),
    ...reasons.map((reason) => get('/api/v1/events', { fieldSelector: `reason=${reason}` })),
  ]);
  return { pods: pods ?? { state: 'absent' }, lostEvents };
}
