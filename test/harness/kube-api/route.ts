import type { Resource } from './types.js';

/** A request path, understood: discovery, a collection, one object, or a pod's status subresource. */
export type Route =
  | { readonly kind: 'discovery'; readonly document: 'version' | 'api' | 'apis' | 'v1' }
  | { readonly kind: 'collection'; readonly resource: Resource; readonly namespace: string | undefined }
  | {
      readonly kind: 'object';
      readonly resource: Resource;
      readonly namespace: string | undefined;
      readonly name: string;
      readonly status: boolean;
    };

const RESOURCES: readonly string[] = ['pods', 'events', 'nodes'];
const isResource = (text: string | undefined): text is Resource => text !== undefined && RESOURCES.includes(text);

export function routeOf(path: string): Route | undefined {
  const documents: Record<string, 'version' | 'api' | 'apis' | 'v1'> = {
    '/version': 'version',
    '/api': 'api',
    '/apis': 'apis',
    '/api/v1': 'v1',
  };
  const document = documents[path.replace(/\/$/, '')];
  if (document) return { kind: 'discovery', document };
  const parts = path
    .split('/')
    .filter((part) => part !== '')
    .map(decodeURIComponent);
  if (parts[0] !== 'api' || parts[1] !== 'v1') return undefined;
  const rest = parts.slice(2);
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest.splice(0, 2);
  }
  const [resource, name, sub, ...extra] = rest;
  if (!isResource(resource) || extra.length > 0) return undefined;
  if ((resource === 'nodes') !== (namespace === undefined) && name !== undefined) return undefined;
  if (name === undefined) return { kind: 'collection', resource, namespace };
  if (sub !== undefined && !(sub === 'status' && resource === 'pods')) return undefined;
  return { kind: 'object', resource, namespace, name, status: sub === 'status' };
}
