import { fail, ok, type Result } from '../reason/result.js';
import type { ClusterAccess } from './cluster-access.js';
import type { CoreV1Event } from './pod-event.js';
import { kubeRequest } from './request.js';

/** Creates the Event; anything but 201 Created is a `KubeApiError` naming the status and the API's own message. */
export async function postEvent(access: ClusterAccess, event: CoreV1Event, timeoutMs: number, signal?: AbortSignal): Promise<Result<{ name: string }, 'KubeApiError'>> {
  const path = `/api/v1/namespaces/${encodeURIComponent(event.metadata.namespace)}/events`;
  const answer = await kubeRequest(access, { method: 'POST', path, body: event, timeoutMs, ...(signal ? { signal } : {}) });
  if (!answer.ok) return answer;
  const { status, body, text } = answer.value;
  if (status === 201 || status === 200) return ok({ name: event.metadata.name });
  return fail('KubeApiError', `POST ${path} answered ${status}: ${statusMessage(body) ?? text.slice(0, 200)}`);
}

/** The `message` of a meta/v1 Status, which is how the API explains a 403 or 422. */
export function statusMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const message = (body as { message?: unknown }).message;
  return typeof message === 'string' ? message : undefined;
}
