import { describe, expect, it } from 'vitest';
import {
  auditCause,
  auditEventOf,
  breakerClosedEvent,
  breakerOpenedEvent,
  openedWhy,
} from '../../src/node-agent/breaker-text.js';

const POLICY = { threshold: 5, windowMs: 60_000, minNamespaces: 1 };
const BROKEN = { healthy: false, message: '/etc/cni/net.d/10-calico.conflist has no linkerd-cni plugin' };
const HEALTHY = { healthy: true, message: '' };

describe('auditEventOf', () => {
  it('the first verdict says something only when it fails', () => {
    expect(auditEventOf(undefined, HEALTHY, 'node-a')).toBeUndefined();
    expect(auditEventOf(undefined, BROKEN, 'node-a')).toEqual({
      reason: 'InterlockCniConfigBroken',
      message: `CNI configuration audit failed: ${BROKEN.message}`,
      type: 'Warning',
    });
  });

  it('every change of verdict is told, and a failure with a new message', () => {
    expect(auditEventOf(BROKEN, HEALTHY, 'node-a')).toEqual({
      reason: 'InterlockCniConfigHealthy',
      message: 'The CNI configuration audit of node node-a is healthy again.',
      type: 'Normal',
    });
    expect(auditEventOf(BROKEN, { healthy: false, message: 'other' }, 'node-a')?.message).toBe(
      'CNI configuration audit failed: other',
    );
  });

  it('the same verdict again says nothing', () => {
    expect(auditEventOf(BROKEN, { ...BROKEN }, 'node-a')).toBeUndefined();
    expect(auditEventOf(HEALTHY, { healthy: true, message: 'different' }, 'node-a')).toBeUndefined();
  });
});

describe("the breaker's words", () => {
  it('an audit cause names the window in seconds', () => {
    expect(auditCause('no plugin', POLICY)).toBe(
      'CNI audit: no plugin (confirmed by a validator failure on this node within 60 s)',
    );
  });

  it('without a cause the count that tripped it is the why, namespaces named only past one', () => {
    expect(openedWhy('', POLICY)).toBe('pods of more than 5 owners in any namespace blocked within 60 s');
    expect(openedWhy('', { ...POLICY, minNamespaces: 3 })).toBe(
      'pods of more than 5 owners in at least 3 namespaces blocked within 60 s',
    );
    expect(openedWhy('CNI audit: x', POLICY)).toBe('CNI audit: x');
  });

  it('the opened Event names the taint only when the node is tainted', () => {
    expect(breakerOpenedEvent('node-a', 'why', true)).toEqual({
      reason: 'InterlockBreakerOpen',
      message:
        "Stopped recreating pods on node node-a: why; the node's CNI is suspect. Tainted interlock.dev/cni-not-ready:NoSchedule so new pods go elsewhere.",
      type: 'Warning',
    });
    expect(breakerOpenedEvent('node-a', 'why', false).message).toBe(
      "Stopped recreating pods on node node-a: why; the node's CNI is suspect.",
    );
  });

  it('the closed Event names the quiet window', () => {
    expect(breakerClosedEvent('node-a', POLICY)).toEqual({
      reason: 'InterlockBreakerClosed',
      message: 'Node node-a stayed healthy for 60 s; recreating blocked pods again.',
      type: 'Normal',
    });
  });
});
