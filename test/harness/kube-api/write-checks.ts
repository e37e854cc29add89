import type { IncomingMessage } from 'node:http';
import { unknownFields } from './field-check.js';
import type { Answer } from './objects.js';
import { apiVersionOf, resourceInfo } from './resources.js';
import type { Route } from './route.js';
import { notFound, statusOf } from './status.js';
import { terminatingRefusal } from './namespace-lifecycle.js';
import type { Store } from './store.js';
import type { KubeObject } from './types.js';

/** Namespaces a new cluster has before anyone applies anything. */
const BUILT_IN_NAMESPACES = ['default', 'kube-system'];

export interface WriteCheck {
  /** The refusal, when the write is refused. */
  readonly answer?: Answer;
  /** Warnings for the `Warning` header (fieldValidation=Warn, the server's default). */
  readonly warnings: readonly string[];
}

type WriteRoute = Extract<Route, { kind: 'collection' | 'object' }>;

const isWrite = (route: WriteRoute, method: string | undefined): boolean =>
  route.kind === 'collection' ? method === 'POST' : method === 'PATCH' || method === 'PUT';

/**
 * What the API server checks of a write before storing it: the namespace exists
 * (NamespaceLifecycle, when asked for) and, per `fieldValidation`, no field is unknown to the
 * object's type (Strict refuses with 400, Warn answers with warnings, Ignore or no parameter neither).
 */
export function writeChecks(
  context: { readonly store: Store; readonly options: { readonly namespaceLifecycle?: boolean } },
  route: WriteRoute,
  req: IncomingMessage,
  body: unknown,
  query: URLSearchParams,
): WriteCheck {
  if (!isWrite(route, req.method) || (route.kind === 'object' && route.status)) return { warnings: [] };
  const info = resourceInfo(route.resource);
  const creates =
    route.kind === 'collection' || (req.headers['content-type'] ?? '').startsWith('application/apply-patch');
  const namespace = route.namespace;
  if (
    context.options.namespaceLifecycle &&
    creates &&
    namespace !== undefined &&
    !BUILT_IN_NAMESPACES.includes(namespace) &&
    !context.store.get('namespaces', undefined, namespace)
  )
    return { answer: { code: 404, body: notFound('namespaces', namespace) }, warnings: [] };
  const terminating =
    context.options.namespaceLifecycle && creates ? terminatingRefusal(context.store, namespace) : undefined;
  if (terminating) return { answer: terminating, warnings: [] };
  // Without the parameter the API server warns; the stand-in checks only when asked (kubectl always
  // asks), so the agent's and validator's own writes cost nothing here.
  const directive = query.get('fieldValidation');
  if (!info || !directive || directive === 'Ignore' || body === null || typeof body !== 'object')
    return { warnings: [] };
  const unknown = (unknownFields(apiVersionOf(info), info.kind, body as KubeObject) ?? [])
    // Strategic merge patch directives ($setElementOrder/..., $patch, $retainKeys) are not fields.
    .filter((path) => !path.includes('$'))
    .map((path) => `unknown field ${JSON.stringify(path)}`);
  if (unknown.length === 0) return { warnings: [] };
  if (directive !== 'Strict') return { warnings: unknown };
  const message = `${info.kind} in version ${JSON.stringify(info.version)} cannot be handled as a ${info.kind}: strict decoding error: ${unknown.join(', ')}`;
  return { answer: { code: 400, body: statusOf(400, 'BadRequest', message) }, warnings: [] };
}
