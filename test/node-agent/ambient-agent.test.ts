import { describe, expect, it } from 'vitest';
import { meshDefaults } from '../../src/cli/commands/node/config.js';
import { podViewOf } from '../../src/node-agent/pod-view.js';
import { distrustOf } from '../../src/node-agent/validator-trust.js';
import { shippedValidator } from '../../src/cli/commands/node/shipped-validator.js';
import { validatorContainer } from '../../src/inject/validator-container.js';
import { ambientPatch } from '../../src/webhook/ambient-patch.js';
import { crashLoopPod } from '../harness/kube-api/pods.js';
import { fakeAgent } from './agent-fakes.js';

// Issue #33 item 5: the node agent run with --mesh istio-ambient treats an ambient validator's
// failure as it treats a sidecar validator's: the same Events, recreation, back-off and breaker.

const IMAGE = 'registry.example/platform/mesh-interlock:1.2.3';
const TRUSTED = ['registry.example/platform/mesh-interlock'];
const AMBIENT = meshDefaults('istio-ambient');
const FINISHED = '2026-11-20T10:00:00Z';

/** The init container the webhook adds to an ambient app pod, read off its patch. */
function webhookContainer(): Record<string, unknown> {
  const app = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } };
  const [add] = ambientPatch(app, { image: IMAGE, annotations: {} }).ops;
  if (add?.op !== 'add') throw new Error('the webhook added nothing');
  return (add.value as Record<string, unknown>[])[0]!;
}

/** An ambient pod of owner `i` in namespace `ns` whose validator (as `container` has it) failed with `message`. */
function ambientPod(i: number, ns: string, message: string, container = webhookContainer(), exitCode = 126) {
  const pod = crashLoopPod({
    name: `a${i}`,
    namespace: ns,
    ownerUid: `o${i}`,
    container: AMBIENT.container,
    image: IMAGE,
    exitCode,
    message,
    finishedAt: FINISHED,
  });
  pod.spec.initContainers[0] = { ...container, name: AMBIENT.container } as never;
  return { ...pod, metadata: { ...pod.metadata, uid: `u${i}`, resourceVersion: '1' } };
}

function ambientAgent() {
  const settings = {
    container: AMBIENT.container,
    failureExitCode: AMBIENT.failureExitCode,
    breaker: { threshold: 5, windowMs: 60_000, minNamespaces: 2 },
    trustedImages: TRUSTED,
    shipped: shippedValidator('istio-ambient'),
  };
  return fakeAgent(settings, () => Date.parse(FINISHED) + 1000);
}

const NO_CAPTURE = 'InterceptionMissing: ipv4 probe to 192.0.2.7:80 was not captured: it left the pod uncaptured';

describe('the node agent with --mesh istio-ambient', () => {
  it("takes Istio's failure code and the ambient validator's name from the preset", () => {
    expect(AMBIENT).toEqual({ container: 'istio-ambient-validation', failureExitCode: 126 });
  });

  it('trusts the ambient validator as the webhook adds it and as manifest prints it, in every printed shape', () => {
    const shapes = [webhookContainer()];
    for (const rulesCheck of [false, true])
      for (const reportEvent of [false, true])
        shapes.push(validatorContainer({ mesh: 'istio-ambient', image: IMAGE, rulesCheck, reportEvent }));
    for (const container of shapes) {
      const view = podViewOf(ambientPod(1, 'shop', NO_CAPTURE, container), AMBIENT.container)!;
      expect(distrustOf(view, TRUSTED, shippedValidator('istio-ambient'))).toBeUndefined();
    }
  });

  it("does not trust an ambient validator given the sidecar preset's check, nor a sidecar validator's", () => {
    const sidecarArgs = { ...webhookContainer(), args: ['--mesh', 'istio'] };
    const view = podViewOf(ambientPod(1, 'shop', NO_CAPTURE, sidecarArgs), AMBIENT.container)!;
    expect(distrustOf(view, TRUSTED, shippedValidator('istio-ambient'))).toMatch(/another check than the printed one/);
    const ambient = podViewOf(ambientPod(2, 'shop', NO_CAPTURE), AMBIENT.container)!;
    expect(distrustOf(ambient, TRUSTED, shippedValidator('istio'))).toMatch(/another check than the printed one/);
  });

  it('recreates a pod whose ambient validator found no capture, with the same Event as for a sidecar pod', async () => {
    const { agent, api, clock } = ambientAgent();
    agent.relisted([ambientPod(1, 'shop', NO_CAPTURE)]);
    await clock.advance(100);
    expect(api.deleted).toEqual(['a1']);
    expect(api.events.map((event) => event.reason)).toEqual(['InterlockRecreating']);
    expect(api.events[0]!.message).toMatch(/^InterceptionMissing: the node's CNI did not set up this pod/);
  });

  it("recreates on ambient's own reasons a new sandbox can fix; a connection ztunnel did not take is only reported", async () => {
    const { agent, api, clock } = ambientAgent();
    agent.relisted([
      ambientPod(1, 'shop', 'AmbientNotCaptured: IPv4 connection to 192.0.2.7:80 left the pod'),
      ambientPod(2, 'cart', 'ZtunnelNotListening: nothing listens on port 15008 in the pod'),
      ambientPod(3, 'shop', 'ZtunnelArrivalUnseen: 15001 accepted a connection that was not the probe'),
      ambientPod(4, 'cart', 'SocketTableUnreadable: /proc/net/tcp6 could not be read'),
    ]);
    await clock.advance(100);
    expect(api.deleted.toSorted()).toEqual(['a1', 'a2']);
  });

  it("another exit code (the sidecar's 95, a pass) is not an ambient failure; exit 64 is reported, not recreated", async () => {
    const { agent, api, clock } = ambientAgent();
    agent.relisted([
      ambientPod(1, 'shop', NO_CAPTURE, webhookContainer(), 95),
      ambientPod(2, 'shop', 'Intercepted', webhookContainer(), 0),
      ambientPod(3, 'shop', 'ConfigInvalid: --mesh "x"', webhookContainer(), 64),
    ]);
    await clock.advance(100);
    expect(api.deleted).toEqual([]);
    expect(api.events.map((event) => event.reason)).toEqual(['InterlockMisconfigured']);
  });

  it('six owners in two namespaces failing ambient capture open the breaker and taint the node', async () => {
    const { agent, api, clock } = ambientAgent();
    agent.relisted([0, 1, 2, 3, 4, 5].map((i) => ambientPod(i, i % 2 ? 'shop' : 'billing', NO_CAPTURE)));
    await clock.advance(100);
    expect(agent.breakerOpen).toBe(true);
    expect(api.taints).toEqual([true]);
    expect(api.events.map((event) => event.reason)).toContain('InterlockBreakerOpen');
  });
});
