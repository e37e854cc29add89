import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { crashLoopPod, nodeObject } from './pods.js';
import { RESOURCE_TABLE } from './resources.js';
import { startKubeApi, type KubeApi } from './server.js';
import type { KubeObject } from './types.js';

let api: KubeApi;
beforeEach(async () => {
  api = await startKubeApi({ bookmarkMs: 50 });
});
afterEach(async () => {
  await api.close();
});

/** A list as the API server answers it: one resourceVersion, and a continue token while more remain. */
type List<T = KubeObject> = {
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: T[];
};
type WatchEvent = { type: string; object: KubeObject };
type Node = KubeObject & { spec: { taints?: unknown[] } };

/** T names what the test reads of the answer; a missing field fails the test where it is read. */
const get = async <T = unknown>(path: string): Promise<{ status: number; body: T }> => {
  const response = await fetch(`${api.url}${path}`);
  return { status: response.status, body: (await response.json()) as T };
};
const send = async <T = unknown>(
  method: string,
  path: string,
  body: unknown,
  type = 'application/json',
): Promise<{ status: number; body: T }> => {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: { 'content-type': type },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
};

/** Reads watch events until `until` says stop (or the stream ends). */
async function watchEvents(path: string, until: (events: WatchEvent[]) => boolean): Promise<WatchEvent[]> {
  const response = await fetch(`${api.url}${path}`);
  const reader = response.body!.getReader();
  const events: WatchEvent[] = [];
  let buffer = '';
  while (!until(events)) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += Buffer.from(value).toString('utf8');
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) if (line) events.push(JSON.parse(line) as WatchEvent);
  }
  await reader.cancel();
  return events;
}

describe('the Kubernetes API stand-in', () => {
  it('serves discovery documents', async () => {
    expect((await get<{ major: string }>('/version')).body.major).toBe('1');
    expect((await get<{ versions: string[] }>('/api')).body.versions).toEqual(['v1']);
    expect((await get<{ resources: Array<{ name: string }> }>('/api/v1')).body.resources.map((r) => r.name)).toEqual([
      'pods',
      'pods/status',
      ...RESOURCE_TABLE.filter((info) => info.group === '' && info.name !== 'pods').map((info) => info.name),
    ]);
    const apps = await get<{ resources: Array<{ name: string; kind: string }> }>('/apis/apps/v1');
    expect(apps.body.resources.find((r) => r.name === 'daemonsets')?.kind).toBe('DaemonSet');
    expect((await get('/apis/apps/v2')).status).toBe(404);
    expect((await get('/apis/apps/v1/pods')).status).toBe(404);
    const root = await get<{ paths: Record<string, { serverRelativeURL: string }> }>('/openapi/v3');
    const policy = root.body.paths['apis/policy/v1']!.serverRelativeURL;
    const document = await get<{ paths: Record<string, { patch?: { parameters: { name: string }[] } }> }>(policy);
    const patch = document.body.paths['/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/{name}']!.patch!;
    expect(patch.parameters.map((p) => p.name)).toContain('fieldValidation');
  });

  it('refuses unknown fields with fieldValidation=Strict, warns with Warn, and stores nothing refused', async () => {
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'r', namespace: 'default' },
      rules: [{ apiGroups: [''], resources: ['events'], verbs: ['create'], verb: ['get'] }],
    };
    const path = '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles';
    const strict = await send('POST', `${path}?fieldValidation=Strict`, role);
    expect(strict.status).toBe(400);
    expect((strict.body as { message: string }).message).toBe(
      'Role in version "v1" cannot be handled as a Role: strict decoding error: unknown field "rules[0].verb"',
    );
    expect(api.store.get('roles', 'default', 'r')).toBeUndefined();
    const warned = await fetch(`${api.url}${path}?fieldValidation=Warn`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(role),
    });
    expect(warned.status).toBe(201);
    expect(warned.headers.get('warning')).toBe('299 - "unknown field \\"rules[0].verb\\""');
  });

  it('lists in chunks with one resourceVersion, filtered by spec.nodeName', async () => {
    for (let i = 0; i < 5; i++)
      api.store.put('pods', crashLoopPod({ name: `p${i}`, nodeName: i < 3 ? 'node-a' : 'node-b' }));
    const first = await get<List>('/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a&limit=2');
    expect(first.body.items.map((p) => p.metadata.name)).toEqual(['p0', 'p1']);
    expect(first.body.metadata.remainingItemCount).toBe(1);
    api.store.put('pods', crashLoopPod({ name: 'p9', nodeName: 'node-a' }));
    const second = await get<List>(
      `/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a&limit=2&continue=${first.body.metadata.continue}`,
    );
    expect(second.body.items.map((p) => p.metadata.name)).toEqual(['p2', 'p9']);
    expect(second.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
    expect(second.body.metadata.continue).toBeUndefined();
  });

  it('watches from a resourceVersion, turns a pod leaving the selector into DELETED, and sends bookmarks', async () => {
    api.store.put('pods', crashLoopPod({ name: 'a' }));
    const rv = api.store.resourceVersion;
    api.store.put('pods', crashLoopPod({ name: 'b' }));
    api.store.put('pods', crashLoopPod({ name: 'a', nodeName: 'node-b' }));
    const events = await watchEvents(
      `/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dnode-a&resourceVersion=${rv}&allowWatchBookmarks=true`,
      (seen) => seen.some((e) => e.type === 'BOOKMARK'),
    );
    expect(events.map((e) => `${e.type}:${e.object.metadata.name ?? ''}`)).toEqual([
      'ADDED:b',
      'DELETED:a',
      'BOOKMARK:',
    ]);
    expect(events[2]?.object.metadata.resourceVersion).toBe(String(api.store.resourceVersion));
  });

  it('answers 410 Gone for a compacted resourceVersion, in a list and as a watch ERROR event', async () => {
    api.store.put('pods', crashLoopPod({ name: 'a' }));
    const old = api.store.resourceVersion - 1;
    api.store.put('pods', crashLoopPod({ name: 'b' }));
    api.store.compact();
    expect((await get(`/api/v1/pods?resourceVersion=${old}&resourceVersionMatch=Exact`)).status).toBe(410);
    expect((await get(`/api/v1/pods?resourceVersion=${old}`)).status).toBe(200);
    const first = await get<List>('/api/v1/pods?limit=1');
    api.store.put('pods', crashLoopPod({ name: 'c' }));
    api.store.compact();
    expect((await get(`/api/v1/pods?limit=1&continue=${first.body.metadata.continue}`)).status).toBe(410);
    const events = await watchEvents(`/api/v1/pods?watch=true&resourceVersion=${old}`, () => false);
    expect(events).toEqual([
      { type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) },
    ]);
  });

  it('deletes only when the uid and resourceVersion preconditions hold (409 otherwise)', async () => {
    const pod = api.store.put('pods', crashLoopPod({ name: 'a' }));
    const path = '/api/v1/namespaces/default/pods/a';
    expect((await send('DELETE', path, { preconditions: { uid: 'someone-else' } })).status).toBe(409);
    const stale = await send('DELETE', path, { preconditions: { uid: pod.metadata.uid, resourceVersion: '1' } });
    expect(stale.body).toMatchObject({ kind: 'Status', code: 409, reason: 'Conflict' });
    expect(
      (
        await send('DELETE', path, {
          preconditions: { uid: pod.metadata.uid, resourceVersion: pod.metadata.resourceVersion },
        })
      ).status,
    ).toBe(200);
    expect((await get(path)).status).toBe(404);
  });

  it('applies merge patches to labels and strategic merge patches to taints by key', async () => {
    api.store.put('nodes', nodeObject('node-a'));
    const taint = { key: 'interlock.dev/cni-not-ready', effect: 'NoSchedule' };
    await send(
      'PATCH',
      '/api/v1/nodes/node-a',
      { spec: { taints: [{ key: 'other', effect: 'NoExecute' }] } },
      'application/merge-patch+json',
    );
    const added = await send<Node>(
      'PATCH',
      '/api/v1/nodes/node-a',
      { spec: { taints: [taint] } },
      'application/strategic-merge-patch+json',
    );
    expect(added.body.spec.taints).toEqual([{ key: 'other', effect: 'NoExecute' }, taint]);
    const removed = await send<Node>(
      'PATCH',
      '/api/v1/nodes/node-a',
      { spec: { taints: [{ key: taint.key, $patch: 'delete' }] } },
      'application/strategic-merge-patch+json',
    );
    expect(removed.body.spec.taints).toEqual([{ key: 'other', effect: 'NoExecute' }]);
    const labelled = await send<Node>(
      'PATCH',
      '/api/v1/nodes/node-a',
      { metadata: { labels: { x: 'y', 'kubernetes.io/os': null } } },
      'application/merge-patch+json',
    );
    expect(labelled.body.metadata.labels).toEqual({
      'kubernetes.io/hostname': 'node-a',
      'kubernetes.io/arch': 'amd64',
      x: 'y',
    });
    expect((await send('PATCH', '/api/v1/nodes/node-a', [], 'application/json-patch+json')).status).toBe(415);
  });

  it('creates events and lists them by involvedObject fields', async () => {
    const event = (name: string, uid: string) => ({
      metadata: { generateName: `${name}.` },
      involvedObject: { kind: 'Pod', name, namespace: 'default', uid },
      reason: 'InterlockBlocked',
      message: 'm',
      type: 'Warning',
    });
    expect((await send('POST', '/api/v1/namespaces/default/events', event('a', 'u1'))).status).toBe(201);
    await send('POST', '/api/v1/namespaces/default/events', event('b', 'u2'));
    const listed = await get<List<KubeObject & { involvedObject: { name: string } }>>(
      '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Da,involvedObject.namespace%3Ddefault,involvedObject.uid%3Du1',
    );
    expect(listed.body.items.map((e) => e.involvedObject.name)).toEqual(['a']);
  });

  it('injects 429 with Retry-After, then answers normally', async () => {
    api.faults.add({
      method: 'GET',
      path: /^\/api\/v1\/nodes/,
      fault: { kind: 'status', code: 429, retryAfterSeconds: 2 },
      times: 1,
    });
    const response = await fetch(`${api.url}/api/v1/nodes`);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('2');
    expect((await get('/api/v1/nodes')).status).toBe(200);
  });

  it('cuts a watch stream on a drop-watch fault and delays answers on a delay fault', async () => {
    api.faults.add({ watch: true, fault: { kind: 'drop-watch', afterMs: 50 }, times: 1 });
    await expect(watchEvents('/api/v1/pods?watch=true', () => false)).rejects.toThrow();
    api.faults.add({ method: 'GET', path: /^\/version$/, fault: { kind: 'delay', ms: 300 }, times: 1 });
    const started = Date.now();
    expect((await get('/version')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });
});
