import { randomUUID } from 'node:crypto';
import { mergePatch, strategicMergePatch } from './patch.js';
import { conflict, notFound, statusOf, type StatusObject } from './status.js';
import { apiVersionOf, resourceInfo } from './resources.js';
import type { Store } from './store.js';
import type { KubeObject, Resource } from './types.js';

export interface Answer {
  readonly code: number;
  readonly body: object | StatusObject;
}

const KIND = (resource: Resource): string => resourceInfo(resource)?.kind ?? resource;
const singular = (resource: Resource): string => resourceInfo(resource)?.singular ?? resource;
const withKind = (resource: Resource, object: KubeObject): KubeObject => {
  const info = resourceInfo(resource);
  return { apiVersion: info ? apiVersionOf(info) : 'v1', kind: KIND(resource), ...object };
};

export function getObject(store: Store, resource: Resource, namespace: string | undefined, name: string): Answer {
  const object = store.get(resource, namespace, name);
  return object
    ? { code: 200, body: withKind(resource, object) }
    : { code: 404, body: notFound(singular(resource) + 's', name) };
}

export function createObject(
  store: Store,
  resource: Resource,
  namespace: string | undefined,
  body: KubeObject,
): Answer {
  const meta = body.metadata ?? ({} as KubeObject['metadata']);
  const generateName = meta.generateName;
  const name = meta.name || (typeof generateName === 'string' ? `${generateName}${randomUUID().slice(0, 5)}` : '');
  if (!name)
    return {
      code: 422,
      body: statusOf(
        422,
        'Invalid',
        `${KIND(resource)} is invalid: metadata.name: Required value: name or generateName is required`,
      ),
    };
  if (store.get(resource, namespace, name))
    return {
      code: 409,
      body: statusOf(409, 'AlreadyExists', `${resource} "${name}" already exists`, { name, kind: resource }),
    };
  const { kind: _kind, apiVersion: _apiVersion, ...rest } = body;
  const stored = store.put(resource, {
    ...rest,
    metadata: {
      ...meta,
      name,
      ...(namespace ? { namespace } : {}),
      uid: undefined,
      resourceVersion: undefined,
    } as KubeObject['metadata'],
  });
  return { code: 201, body: withKind(resource, stored) };
}

interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** DELETE with DeleteOptions.preconditions: a uid or resourceVersion that differs answers 409. */
export function deleteObject(
  store: Store,
  resource: Resource,
  namespace: string | undefined,
  name: string,
  body: { preconditions?: Preconditions } | undefined,
): Answer {
  const object = store.get(resource, namespace, name);
  if (!object) return { code: 404, body: notFound(resource, name) };
  const wanted = body?.preconditions ?? {};
  if (wanted.uid !== undefined && wanted.uid !== object.metadata.uid) {
    return {
      code: 409,
      body: conflict(
        resource,
        name,
        `Precondition failed: UID in precondition: ${wanted.uid}, UID in object meta: ${object.metadata.uid}`,
      ),
    };
  }
  if (wanted.resourceVersion !== undefined && wanted.resourceVersion !== object.metadata.resourceVersion) {
    return {
      code: 409,
      body: conflict(
        resource,
        name,
        `Precondition failed: ResourceVersion in precondition: ${wanted.resourceVersion}, ResourceVersion in object meta: ${object.metadata.resourceVersion}`,
      ),
    };
  }
  const removed = store.remove(resource, namespace, name)!;
  return { code: 200, body: withKind(resource, removed) };
}

const PATCHERS: Record<string, (target: unknown, patch: unknown) => unknown> = {
  'application/merge-patch+json': mergePatch,
  'application/strategic-merge-patch+json': strategicMergePatch,
};

/** PATCH (merge or strategic merge); a resourceVersion in the patch is a precondition, as on the server. */
export function patchObject(
  store: Store,
  resource: Resource,
  namespace: string | undefined,
  name: string,
  contentType: string,
  patch: unknown,
  statusOnly: boolean,
  dryRun = false,
): Answer {
  const patcher = PATCHERS[contentType.split(';')[0]!.trim()];
  if (!patcher)
    return {
      code: 415,
      body: statusOf(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: ${Object.keys(PATCHERS).join(', ')}`,
      ),
    };
  const object = store.get(resource, namespace, name);
  if (!object) return { code: 404, body: notFound(resource, name) };
  if (patch === null || typeof patch !== 'object')
    return { code: 400, body: statusOf(400, 'BadRequest', 'the patch is not a JSON object') };
  const wantedRv = (patch as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
  if (wantedRv !== undefined && wantedRv !== object.metadata.resourceVersion) {
    return {
      code: 409,
      body: conflict(
        resource,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      ),
    };
  }
  const applied = patcher(
    object,
    statusOnly ? { status: (patch as { status?: unknown }).status } : patch,
  ) as KubeObject;
  // As nodeStrategy.PrepareForUpdate: a Node's status changes only through nodes/status.
  if (resource === 'nodes' && !statusOnly) applied.status = object.status;
  applied.metadata = {
    ...applied.metadata,
    name: object.metadata.name,
    namespace: object.metadata.namespace,
    uid: object.metadata.uid,
  } as KubeObject['metadata'];
  return { code: 200, body: withKind(resource, dryRun ? applied : store.put(resource, applied)) };
}

/** A create with `dryRun=All`: every check of a create, nothing stored. */
export function dryRunCreate(
  store: Store,
  resource: Resource,
  namespace: string | undefined,
  body: KubeObject,
): Answer {
  const name = body.metadata?.name;
  if (name && store.get(resource, namespace, name))
    return {
      code: 409,
      body: statusOf(409, 'AlreadyExists', `${resource} "${name}" already exists`, { name, kind: resource }),
    };
  if (!name && typeof body.metadata?.generateName !== 'string') return createObject(store, resource, namespace, body);
  const { kind: _kind, apiVersion: _apiVersion, ...rest } = body;
  return {
    code: 201,
    body: withKind(resource, { ...rest, metadata: { ...body.metadata, ...(namespace ? { namespace } : {}) } }),
  };
}

/**
 * Server-side apply (`application/apply-patch+yaml`): creates the object when it does not exist,
 * otherwise merges the applied configuration into it (field ownership is not tracked).
 */
export function serverSideApply(
  store: Store,
  resource: Resource,
  namespace: string | undefined,
  name: string,
  body: KubeObject,
  dryRun: boolean,
): Answer {
  if (body?.metadata?.name !== undefined && body.metadata.name !== name)
    return {
      code: 400,
      body: statusOf(400, 'BadRequest', 'the name of the object does not match the name on the URL'),
    };
  const object = { ...body, metadata: { ...body.metadata, name } } as KubeObject;
  if (!store.get(resource, namespace, name))
    return dryRun ? dryRunCreate(store, resource, namespace, object) : createObject(store, resource, namespace, object);
  return patchObject(store, resource, namespace, name, 'application/strategic-merge-patch+json', object, false, dryRun);
}
