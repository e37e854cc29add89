import { describe, expect, it } from 'vitest';
import { scopedViewOf } from '../../src/node-agent/pod-scope.js';
import { crashLoopPod } from '../harness/kube-api/pods.js';

const SCOPE = { node: 'node-a', container: 'linkerd-network-validator' };

describe('scopedViewOf', () => {
  it('a pod of this node with the validator is looked at', () => {
    expect(scopedViewOf(crashLoopPod({ name: 'p' }), SCOPE)?.key).toBe('default/p');
  });

  it('a pod of another node is not, whatever the watch selector promised', () => {
    expect(scopedViewOf(crashLoopPod({ name: 'p', nodeName: 'node-b' }), SCOPE)).toBeUndefined();
  });

  it('a pod without the validator container is not', () => {
    expect(scopedViewOf(crashLoopPod({ name: 'p', container: 'istio-validation' }), SCOPE)).toBeUndefined();
  });

  it('with namespaces, only pods in them are looked at', () => {
    const scope = { ...SCOPE, namespaces: ['team-a', 'team-b'] };
    expect(scopedViewOf(crashLoopPod({ name: 'p', namespace: 'team-b' }), scope)?.key).toBe('team-b/p');
    expect(scopedViewOf(crashLoopPod({ name: 'p', namespace: 'default' }), scope)).toBeUndefined();
  });
});
