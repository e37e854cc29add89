import { fail, ok, type Result } from '../reason/result.js';
import type { ClusterAccess } from './cluster-access.js';
import type { CoreV1Event } from './pod-event.js';
import { kubeRequest, type KubeRequest, type KubeResponse } from './request.js';

export interface Recorded {
  readonly name: string;
  readonly count: number;
}

/**
 * Creates the Event, or, when one with its name exists (the same pod failed the same way before),
 * counts it up as the kubelet's recorder does: count + 1, new lastTimestamp and message. Every
 * request shares the one `timeoutMs` budget. Any other answer is a `KubeApiError` naming the
 * status and the API's own message.
 */
export async function postEvent(
  access: ClusterAccess,
  event: CoreV1Event,
  timeoutMs: number,
): Promise<Result<Recorded, 'KubeApiError'>> {
  // Monotonic: a wall-clock step must not stretch or cut the budget.
  const deadline = performance.now() + timeoutMs;
  const left = () => Math.max(1, Math.round(deadline - performance.now()));
  const collection = `/api/v1/namespaces/${encodeURIComponent(event.metadata.namespace)}/events`;
  const created = await expect2xx(access, { method: 'POST', path: collection, body: event, timeoutMs: left() }, [409]);
  if (!created.ok) return created;
  if (created.value.status !== 409) return ok({ name: event.metadata.name, count: 1 });
  const path = `${collection}/${encodeURIComponent(event.metadata.name)}`;
  const existing = await expect2xx(access, { method: 'GET', path, timeoutMs: left() });
  if (!existing.ok) return existing;
  const count = Number((existing.value.body as { count?: unknown } | undefined)?.count ?? 1) + 1;
  const patch = { count, lastTimestamp: event.lastTimestamp, message: event.message };
  const patched = await expect2xx(access, {
    method: 'PATCH',
    path,
    body: patch,
    contentType: 'application/merge-patch+json',
    timeoutMs: left(),
  });
  return patched.ok ? ok({ name: event.metadata.name, count }) : patched;
}

async function expect2xx(
  access: ClusterAccess,
  request: KubeRequest,
  alsoOk: readonly number[] = [],
): Promise<Result<KubeResponse, 'KubeApiError'>> {
  const answer = await kubeRequest(access, request);
  if (!answer.ok) return answer;
  const { status, body, text } = answer.value;
  if ((status >= 200 && status < 300) || alsoOk.includes(status)) return answer;
  return fail(
    'KubeApiError',
    `${request.method} ${request.path} answered ${status}: ${statusMessage(body) ?? text.slice(0, 200)}`,
  );
}

/** The `message` of a meta/v1 Status, which is how the API explains a 403 or 422. */
export function statusMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const message = (body as { message?: unknown }).message;
  return typeof message === 'string' ? message : undefined;
}
