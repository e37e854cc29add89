import type { Answer } from './objects.js';
import { RESOURCE_TABLE } from './resources.js';
import { statusOf } from './status.js';
import type { Store } from './store.js';
import type { Resource } from './types.js';

/**
 * Deleting a Namespace, as the API server and the namespace controller do it: the Namespace is
 * marked Terminating at once (a deletionTimestamp, phase Terminating; no new object may be created
 * in it), and some time later everything in it is deleted and then the Namespace itself. So a
 * `kubectl delete -f` that deletes a Namespace takes every object inside with it, whichever file
 * created them: exactly the hazard of two outputs sharing one namespace.
 */
export function terminateNamespace(store: Store, name: string, finalizeMs: number): Answer {
  const namespace = store.get('namespaces', undefined, name);
  if (!namespace)
    return {
      code: 404,
      body: statusOf(404, 'NotFound', `namespaces "${name}" not found`, { name, kind: 'namespaces' }),
    };
  if (!namespace.metadata.deletionTimestamp) {
    const marked = structuredClone(namespace);
    marked.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    (marked as { status?: unknown }).status = { phase: 'Terminating' };
    store.put('namespaces', marked);
    setTimeout(() => finalizeNamespace(store, name), finalizeMs).unref();
  }
  const current = store.get('namespaces', undefined, name)!;
  return { code: 200, body: { apiVersion: 'v1', kind: 'Namespace', ...current } };
}

function finalizeNamespace(store: Store, name: string): void {
  for (const info of RESOURCE_TABLE) {
    if (!info.namespaced) continue;
    for (const object of store.list(info.name as Resource))
      if (object.metadata.namespace === name) store.remove(info.name as Resource, name, object.metadata.name);
  }
  store.remove('namespaces', undefined, name);
}

/** NamespaceLifecycle's refusal of a create in a Terminating namespace. */
export function terminatingRefusal(store: Store, namespace: string | undefined): Answer | undefined {
  if (namespace === undefined) return undefined;
  const object = store.get('namespaces', undefined, namespace);
  if (!object?.metadata.deletionTimestamp) return undefined;
  return {
    code: 403,
    body: statusOf(
      403,
      'Forbidden',
      `unable to create new content in namespace ${namespace} because it is being terminated`,
    ),
  };
}
