import { resourceInfo } from './resources.js';
import type { Resource } from './types.js';

/**
 * A request path, understood: a discovery or OpenAPI document, a collection, one object, or a
 * pod's or node's status subresource. Resources are found under their own group version only.
 */
export type Route =
  | { readonly kind: 'discovery'; readonly document: 'version' | 'api' | 'apis' | 'v1' }
  | { readonly kind: 'group-version'; readonly group: string; readonly version: string }
  | { readonly kind: 'openapi'; readonly groupVersion: string | undefined }
  | { readonly kind: 'collection'; readonly resource: Resource; readonly namespace: string | undefined }
  | {
      readonly kind: 'object';
      readonly resource: Resource;
      readonly namespace: string | undefined;
      readonly name: string;
      readonly status: boolean;
    };

const DOCUMENTS: Record<string, 'version' | 'api' | 'apis' | 'v1'> = {
  '/version': 'version',
  '/api': 'api',
  '/apis': 'apis',
  '/api/v1': 'v1',
};

/** `api/v1` or `apis/GROUP/VERSION` and what follows it. */
function splitGroupVersion(parts: readonly string[]): { group: string; version: string; rest: string[] } | undefined {
  if (parts[0] === 'api' && parts[1] === 'v1') return { group: '', version: 'v1', rest: parts.slice(2) };
  if (parts[0] === 'apis' && parts[1] && parts[2]) return { group: parts[1], version: parts[2], rest: parts.slice(3) };
  return undefined;
}

export function routeOf(path: string): Route | undefined {
  const trimmed = path.replace(/\/$/, '');
  const document = DOCUMENTS[trimmed];
  if (document) return { kind: 'discovery', document };
  if (trimmed === '/openapi/v3') return { kind: 'openapi', groupVersion: undefined };
  if (trimmed.startsWith('/openapi/v3/'))
    return { kind: 'openapi', groupVersion: trimmed.slice('/openapi/v3/'.length) };
  const parts = trimmed
    .split('/')
    .filter((part) => part !== '')
    .map(decodeURIComponent);
  const gv = splitGroupVersion(parts);
  if (!gv) return undefined;
  const { rest } = gv;
  if (rest.length === 0) return gv.group ? { kind: 'group-version', group: gv.group, version: gv.version } : undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest.splice(0, 2);
  }
  const [resource, name, sub, ...extra] = rest;
  const info = resourceInfo(resource ?? '');
  if (!info || info.group !== gv.group || info.version !== gv.version || extra.length > 0) return undefined;
  if (!info.namespaced && namespace !== undefined) return undefined;
  if (info.namespaced && namespace === undefined && name !== undefined) return undefined;
  if (name === undefined) return { kind: 'collection', resource: info.name as Resource, namespace };
  // The status subresources the agents write: pods/status (labels, repair) and nodes/status (conditions).
  if (sub !== undefined && !(sub === 'status' && (resource === 'pods' || resource === 'nodes'))) return undefined;
  return { kind: 'object', resource: info.name as Resource, namespace, name, status: sub === 'status' };
}
