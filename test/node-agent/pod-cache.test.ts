import { describe, expect, it } from 'vitest';
import { PodCache } from '../../src/node-agent/pod-cache.js';
import { podViewOf, type PodView } from '../../src/node-agent/pod-view.js';
import { crashLoopPod } from '../harness/kube-api/pods.js';

const viewOf = (name: string, uid: string): PodView => {
  const pod = crashLoopPod({ name });
  pod.metadata.uid = uid;
  return podViewOf(pod, 'linkerd-network-validator')!;
};

describe('PodCache', () => {
  it('keeps a run memory per uid across updates of the same pod', () => {
    const cache = new PodCache();
    cache.upsert(viewOf('p', 'u1'));
    cache.memory('u1').done = 'run-1';
    cache.upsert(viewOf('p', 'u1'));
    expect(cache.doneRun('u1')).toBe('run-1');
    expect(cache.size).toBe(1);
  });

  it('a name that now belongs to a new pod starts with no memory', () => {
    const cache = new PodCache();
    cache.upsert(viewOf('p', 'u1'));
    cache.memory('u1').done = 'run-1';
    cache.upsert(viewOf('p', 'u2'));
    expect(cache.doneRun('u1')).toBeUndefined();
    expect(cache.get('default/p')?.uid).toBe('u2');
  });

  it('forgetting a pod drops its view and its memory', () => {
    const cache = new PodCache();
    cache.upsert(viewOf('p', 'u1'));
    cache.upsert(viewOf('q', 'u2'));
    cache.memory('u1').counted = 'run-1';
    cache.forget('default/p');
    expect(cache.keys()).toEqual(['default/q']);
    expect([...cache.all()].map((view) => view.uid)).toEqual(['u2']);
    expect(cache.memory('u1')).toEqual({});
  });

  it('doneRun makes no memory', () => {
    const cache = new PodCache();
    expect(cache.doneRun('u9')).toBeUndefined();
    cache.memory('u9').held = 'run-1';
    expect(cache.doneRun('u9')).toBeUndefined();
    expect(cache.memory('u9')).toEqual({ held: 'run-1' });
  });
});
