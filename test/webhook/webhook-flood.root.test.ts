import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAuthority, removeAuthority, type Authority } from '../harness/certs.js';
import { memoryCgroup, type MemoryCgroup } from '../harness/memory-cgroup.js';
import { launchArgs } from '../harness/pod-namespace.js';
import { WEBHOOK_MEMORY_LIMIT_MIB } from '../../src/webhook/webhook-budget.js';
import { webhookManifest } from '../../src/webhook/webhook-manifest.js';
import { admissionReview, meshPods } from '../../scripts/mesh-pods.mjs';
import { send, spawnWebhook, type Review, type WebhookProcess } from './webhook-client.js';

const LIMIT = WEBHOOK_MEMORY_LIMIT_MIB * 1024 * 1024;
const MAX_BODY = 3 * 1024 * 1024;
const valid = meshPods().filter((p) => p.validator);
let authority: Authority;
let cgroup: MemoryCgroup;
let webhook: WebhookProcess;

/** What the kernel's limit is for: the same figure the manifest prints. */
function printedLimit(): string {
  const deployment = webhookManifest({
    image: 'x',
    namespace: 'ns',
    failurePolicy: 'Ignore',
    metricsNamespace: 'monitoring',
  }).find((d) => d.kind === 'Deployment') as {
    spec: { template: { spec: { containers: { resources: { limits: { memory: string } } }[] } } };
  };
  return deployment.spec.template.spec.containers[0]!.resources.limits.memory;
}

const review = (body: string) =>
  send(webhook.port, authority.ca, '/mutate', body).then(
    (reply) => (reply.status === 200 ? (JSON.parse(reply.body) as Review) : undefined),
    () => undefined,
  );

/** `count` requests of `body`, `parallel` at a time; resolves when all ended (answered or cut). */
async function flood(count: number, parallel: number, body: () => string): Promise<number> {
  let answered = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next++ < count) if (await review(body())) answered++;
    }),
  );
  return answered;
}

/**
 * The slow and header-flooding peers are a tenant's pods, not the API server: another source
 * address, so the per-source cap (half the slots) leaves the API server's share to its admissions.
 */
const TENANT = { host: '127.0.0.1', localAddress: '127.0.0.2' } as const;

/** A sender that declares a full-size body, then sends a byte every 200 ms until the server closes. */
function slowSender(uid: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ ...TENANT, port: webhook.port, ca: authority.ca, servername: 'localhost' }, () => {
      socket.write(
        `POST /mutate HTTP/1.1\r\nhost: x\r\ncontent-length: ${MAX_BODY - 1}\r\n\r\n{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"${uid}",`,
      );
      const drip = setInterval(() => socket.write(' '), 200);
      socket.once('close', () => clearInterval(drip));
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
    socket.setTimeout(15_000, () => socket.destroy());
  });
}

/** Headers past Node's 16 KiB cap, or headers that stop half-way: each ends in a 431 or a closed connection. */
function headerFlood(bytes: number, finish: boolean): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ ...TENANT, port: webhook.port, ca: authority.ca, servername: 'localhost' }, () =>
      socket.write(`POST /mutate HTTP/1.1\r\nhost: x\r\n${'x-flood: a\r\n'.repeat(bytes / 12)}${finish ? '\r\n' : ''}`),
    );
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
    socket.setTimeout(15_000, () => socket.destroy());
  });
}

const wrapped = (object: string, uid: string) =>
  `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"${uid}","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","object":${object}}}`;

const hostile = {
  deep: (uid: string) =>
    wrapped(
      `{"spec":{"initContainers":[{"name":"linkerd-network-validator","env":[{"name":"X","value":${'['.repeat(5000)}${']'.repeat(5000)}}]}]}}`,
      uid,
    ),
  wide: (uid: string) => wrapped(`[${'{},'.repeat((MAX_BODY - 400) / 3 - 1)}{}]`, uid),
  containers: (uid: string) => {
    const pod = structuredClone(valid[0]!.pod) as { spec: { initContainers: unknown[] } };
    const validator = pod.spec.initContainers.find((c) => (c as { name: string }).name === valid[0]!.validator);
    pod.spec.initContainers = Array.from({ length: 3000 }, () => validator);
    return admissionReview(pod, uid);
  },
};

beforeAll(async () => {
  authority = makeAuthority('flood');
  cgroup = memoryCgroup(`interlock-webhook-flood-${process.pid}`, LIMIT);
  const [node, ...flags] = launchArgs('snapshot');
  // The shell joins the cgroup, then becomes the webhook: every byte it allocates is charged there.
  webhook = await spawnWebhook(
    ['/bin/sh', '-c', `${cgroup.enter} && exec "$0" "$@"`, node!, ...flags],
    join(authority.dir, 'tls.crt'),
    join(authority.dir, 'tls.key'),
  );
}, 30_000);

afterAll(async () => {
  webhook?.child.kill('SIGKILL');
  await webhook?.exited;
  cgroup?.remove();
  removeAuthority(authority);
});

describe(`a flood of hostile requests, in a memory cgroup of the printed limit (${WEBHOOK_MEMORY_LIMIT_MIB} MiB)`, () => {
  it('the cgroup is limited to what the manifest prints', () => {
    expect(printedLimit()).toBe(`${WEBHOOK_MEMORY_LIMIT_MIB}Mi`);
  });

  it('answers every valid admission alongside it: no crash, no OOM kill', async () => {
    let seq = 0;
    const slow = [
      ...Array.from({ length: 60 }, (_, i) => slowSender(`u-slow-${i}`)),
      ...Array.from({ length: 20 }, (_, i) => headerFlood(40_000, i % 2 === 0)),
    ];
    const valids: (Review | undefined)[] = [];
    const hostiles = Promise.all([
      flood(40, 4, () => hostile.deep(`u-deep-${++seq}`)),
      flood(16, 6, () => hostile.wide(`u-wide-${++seq}`)),
      flood(16, 4, () => hostile.containers(`u-many-${++seq}`)),
    ]);
    for (let round = 0; round < 4; round++)
      valids.push(
        ...(await Promise.all(
          valid.map((fixture, i) => review(admissionReview(fixture.pod, `u-valid-${round}-${i}`))),
        )),
      );
    const [deep, wide, containers] = await hostiles;
    await Promise.all(slow);
    const peak = cgroup.peakBytes();
    console.log(
      `flood: cgroup v${cgroup.version}, peak ${(peak / 1048576).toFixed(1)} MiB of ${WEBHOOK_MEMORY_LIMIT_MIB}; hostile answered: deep ${deep}/40, wide ${wide}/16, containers ${containers}/16`,
    );
    expect(webhook.child.exitCode).toBeNull();
    expect(cgroup.oomKills()).toBe(0);
    expect(peak).toBeLessThan(LIMIT);
    expect(deep).toBe(40);
    expect(containers).toBe(16);
    expect(valids).toHaveLength(valid.length * 4);
    for (const [i, answer] of valids.entries()) {
      expect(answer?.response.uid, `valid ${i}`).toMatch(/^u-valid-/);
      expect(answer?.response.patchType, `valid ${i}: ${answer?.response.status?.message}`).toBe('JSONPatch');
    }
  }, 60_000);
});
