import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterAccess } from '../../src/kube/cluster-access.js';
import { listAllPods, watchPodsOnce, type PodWatchOptions, type PodWatchSink } from '../../src/kube/watch-pods.js';
import { crashLoopPod } from '../harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../harness/kube-api/server.js';

let api: KubeApi;
let access: ClusterAccess;
beforeEach(async () => {
  api = await startKubeApi({ bookmarkMs: 50 });
  access = { server: api.url, insecureSkipTlsVerify: false, origin: 'test' };
});
afterEach(async () => {
  await api.close();
});

const options: PodWatchOptions = {
  fieldSelector: 'spec.nodeName=node-a',
  pageSize: 2,
  requestTimeoutMs: 300,
  watchTimeoutSeconds: 1,
  idleMs: 5000,
};
const sink = (seen: string[]): PodWatchSink => ({
  relisted: () => undefined,
  changed: (type, pod) => seen.push(`${type} ${(pod as { metadata: { name: string } }).metadata.name}`),
  restarted: () => undefined,
  apiError: () => undefined,
});

describe('the pod watch adapter against the stand-in', () => {
  it('lists in pages of pageSize and returns the first page resourceVersion', async () => {
    for (let i = 0; i < 5; i++) api.store.put('pods', crashLoopPod({ name: `p${i}` }));
    api.store.put('pods', crashLoopPod({ name: 'other', nodeName: 'node-b' }));
    const listed = await listAllPods(access, options);
    expect(listed.ok && listed.value.items.length).toBe(5);
    expect(api.requests.filter((request) => request.path === '/api/v1/pods')).toHaveLength(3);
  });

  it('follows bookmarks to the newest resourceVersion and ends when the server times the watch out', async () => {
    api.store.put('pods', crashLoopPod({ name: 'a' }));
    const from = String(api.store.resourceVersion);
    api.store.put('pods', crashLoopPod({ name: 'b' }));
    for (let i = 0; i < 5; i++) api.store.put('pods', crashLoopPod({ name: `x${i}`, nodeName: 'node-b' }));
    const seen: string[] = [];
    const end = await watchPodsOnce(access, options, from, sink(seen), new AbortController().signal);
    expect(seen).toEqual(['ADDED b']);
    expect(end).toEqual({ kind: 'ended', resourceVersion: String(api.store.resourceVersion) });
  });

  it('an ERROR 410 event is `expired`; a server that never answers is a failure after the request timeout', async () => {
    api.store.put('pods', crashLoopPod({ name: 'a' }));
    api.store.put('pods', crashLoopPod({ name: 'b' }));
    api.store.compact();
    expect(await watchPodsOnce(access, options, '1', sink([]), new AbortController().signal)).toEqual({
      kind: 'expired',
    });
    api.faults.add({ watch: true, fault: { kind: 'delay', ms: 3000 } });
    const hung = await watchPodsOnce(
      access,
      options,
      String(api.store.resourceVersion),
      sink([]),
      new AbortController().signal,
    );
    expect(hung).toMatchObject({
      kind: 'failed',
      error: { status: 0, message: expect.stringContaining('no answer within 300 ms') },
    });
  });
});
