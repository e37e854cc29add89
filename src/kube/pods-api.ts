import type { ClusterAccess } from './cluster-access.js';
import { statusMessage } from './post-event.js';
import { kubeRequest, type KubeRequest } from './request.js';

/** An API call that did not succeed: its HTTP status (0 for no answer) and the server's Retry-After. */
export interface ApiFailure {
  readonly status: number;
  readonly retryAfterSeconds: number | undefined;
  readonly message: string;
}

export type ApiResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ApiFailure };

export interface PodRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
}

const podPath = (ref: Pick<PodRef, 'namespace' | 'name'>): string =>
  `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/pods/${encodeURIComponent(ref.name)}`;

function retryAfterOf(body: unknown): number | undefined {
  const details = (body as { details?: { retryAfterSeconds?: unknown } } | undefined)?.details;
  return typeof details?.retryAfterSeconds === 'number' ? details.retryAfterSeconds : undefined;
}

/** One call; `accept` lists the statuses that are answers rather than failures. */
export async function call(
  access: ClusterAccess,
  request: KubeRequest,
  accept: readonly number[],
): Promise<ApiResult<{ status: number; body: unknown }>> {
  const answer = await kubeRequest(access, request);
  if (!answer.ok)
    return { ok: false, error: { status: 0, retryAfterSeconds: undefined, message: answer.error.message } };
  const { status, body, text } = answer.value;
  if (accept.includes(status)) return { ok: true, value: { status, body } };
  const message = `${request.method} ${request.path} answered ${status}: ${statusMessage(body) ?? text.slice(0, 200)}`;
  return { ok: false, error: { status, retryAfterSeconds: retryAfterOf(body), message } };
}

export type DeleteOutcome = 'deleted' | 'already-gone' | 'precondition-failed';

/**
 * Deletes exactly the pod that was judged: the uid and resourceVersion preconditions make the API
 * refuse (409) when the name now belongs to a new pod or the pod changed since it was read.
 */
export async function deletePod(
  access: ClusterAccess,
  ref: PodRef,
  timeoutMs: number,
): Promise<ApiResult<DeleteOutcome>> {
  const body = {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    preconditions: { uid: ref.uid, resourceVersion: ref.resourceVersion },
  };
  const answer = await call(access, { method: 'DELETE', path: podPath(ref), body, timeoutMs }, [200, 202, 404, 409]);
  if (!answer.ok) return answer;
  const outcome: DeleteOutcome =
    answer.value.status === 404 ? 'already-gone' : answer.value.status === 409 ? 'precondition-failed' : 'deleted';
  return { ok: true, value: outcome };
}

/** Labels the pod for its controller (or an operator) to recreate; the resourceVersion is a precondition. */
export async function labelPod(
  access: ClusterAccess,
  ref: PodRef,
  label: string,
  value: string,
  timeoutMs: number,
): Promise<ApiResult<DeleteOutcome>> {
  const body = { metadata: { resourceVersion: ref.resourceVersion, labels: { [label]: value } } };
  const answer = await call(
    access,
    { method: 'PATCH', path: podPath(ref), body, contentType: 'application/merge-patch+json', timeoutMs },
    [200, 404, 409],
  );
  if (!answer.ok) return answer;
  const outcome: DeleteOutcome =
    answer.value.status === 404 ? 'already-gone' : answer.value.status === 409 ? 'precondition-failed' : 'deleted';
  return { ok: true, value: outcome };
}

export type CreateOutcome = 'created' | 'exists';

/** Creates a core/v1 Event (about a pod or a node) in `namespace`; one of that name already there is `exists` (409). */
export async function createEvent(
  access: ClusterAccess,
  namespace: string,
  event: object,
  timeoutMs: number,
): Promise<ApiResult<CreateOutcome>> {
  const answer = await call(
    access,
    { method: 'POST', path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, body: event, timeoutMs },
    [200, 201, 409],
  );
  if (!answer.ok) return answer;
  return { ok: true, value: answer.value.status === 409 ? 'exists' : 'created' };
}

export interface PodPage {
  readonly items: readonly unknown[];
  readonly resourceVersion: string;
  readonly continueToken: string | undefined;
}

/** One chunk of the pod list; a 410 (expired continue token) is a failure with status 410. */
export async function listPodsPage(
  access: ClusterAccess,
  query: Record<string, string>,
  timeoutMs: number,
  path = '/api/v1/pods',
): Promise<ApiResult<PodPage>> {
  const answer = await call(access, { method: 'GET', path, query, timeoutMs }, [200]);
  if (!answer.ok) return answer;
  const body = answer.value.body as
    { items?: unknown[]; metadata?: { resourceVersion?: string; continue?: string } } | undefined;
  return {
    ok: true,
    value: {
      items: body?.items ?? [],
      resourceVersion: body?.metadata?.resourceVersion ?? '',
      continueToken: body?.metadata?.continue || undefined,
    },
  };
}
