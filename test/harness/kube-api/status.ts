/** metav1.Status, as the API server writes it for every failure (kubectl prints `message`). */
export interface StatusObject {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  code: number;
  details?: { name?: string; kind?: string; retryAfterSeconds?: number };
}

export function statusOf(
  code: number,
  reason: string,
  message: string,
  details?: StatusObject['details'],
): StatusObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
    ...(details ? { details } : {}),
  };
}

export const gone = (rv: string | number): StatusObject => statusOf(410, 'Expired', `too old resource version: ${rv}`);

export const notFound = (kind: string, name: string): StatusObject =>
  statusOf(404, 'NotFound', `${kind} "${name}" not found`, { name, kind });

export const conflict = (kind: string, name: string, message: string): StatusObject =>
  statusOf(409, 'Conflict', `Operation cannot be fulfilled on ${kind} "${name}": ${message}`, { name, kind });
