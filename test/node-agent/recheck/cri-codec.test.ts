import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';
import {
  decodeListPodSandbox,
  decodePodSandboxStatus,
  listPodSandboxRequest,
  podSandboxStatusRequest,
} from '../../../src/node-agent/cri/cri-messages.js';
import { grpcFrame, grpcMessage } from '../../../src/node-agent/cri/grpc-frame.js';
import { decodeFields, MAX_FIELDS } from '../../../src/node-agent/cri/protobuf.js';
import { prng } from '../../harness/prng.js';

// The vendored CRI v1 definition (kubernetes/cri-api, e2e/cri/proto/PROVENANCE.md) with the
// serializers grpc-js uses (the e2e suite's client): the hand-rolled codec is checked against an
// independent implementation both ways.
const definition = protoLoader.loadSync(fileURLToPath(new URL('../../../e2e/cri/proto/api.proto', import.meta.url)), {
  keepCase: false,
  longs: Number,
  enums: Number,
  defaults: false,
});
interface Method {
  requestSerialize(value: object): Buffer;
  requestDeserialize(bytes: Buffer): Record<string, unknown>;
  responseSerialize(value: object): Buffer;
}
const method = (name: string) => (definition['runtime.v1.RuntimeService'] as unknown as Record<string, Method>)[name]!;

const listAnswer = (items: object[]) => new Uint8Array(method('ListPodSandbox').responseSerialize({ items }));
const statusAnswer = (object: object) => new Uint8Array(method('PodSandboxStatus').responseSerialize(object));

describe('the CRI codec against protobufjs', () => {
  it('encodes ListPodSandbox filtered by the pod uid label and the READY state', () => {
    const decoded = method('ListPodSandbox').requestDeserialize(Buffer.from(listPodSandboxRequest('u-1')));
    expect(decoded).toEqual({ filter: { state: {}, labelSelector: { 'io.kubernetes.pod.uid': 'u-1' } } });
  });

  it('encodes PodSandboxStatus with verbose', () => {
    const decoded = method('PodSandboxStatus').requestDeserialize(Buffer.from(podSandboxStatusRequest('abc')));
    expect(decoded).toEqual({ podSandboxId: 'abc', verbose: true });
  });

  it('decodes the sandboxes, their uid and state, skipping fields it does not need', () => {
    const bytes = listAnswer([
      {
        id: 'a',
        metadata: { name: 'p', uid: 'u-1', namespace: 'ns', attempt: 3 },
        state: 0,
        createdAt: 17,
        labels: { x: 'y' },
      },
      { id: 'b', metadata: { uid: 'u-1' }, state: 1, annotations: { k: 'v' }, runtimeHandler: 'runc' },
    ]);
    expect(decodeListPodSandbox(bytes)).toEqual({
      ok: true,
      value: [
        { id: 'a', uid: 'u-1', ready: true },
        { id: 'b', uid: 'u-1', ready: false },
      ],
    });
  });

  it('decodes a verbose status: id, state and the info map', () => {
    const info = JSON.stringify({
      runtimeSpec: { linux: { namespaces: [{ type: 'network', path: '/run/netns/cni-1' }] } },
    });
    const bytes = statusAnswer({
      status: { id: 'a', state: 0, createdAt: 5, network: { ip: '10.0.0.2' }, labels: { a: 'b' } },
      info: { info, other: '{}' },
      timestamp: 99,
    });
    const decoded = decodePodSandboxStatus(bytes);
    expect(decoded.ok && decoded.value.id).toBe('a');
    expect(decoded.ok && decoded.value.ready).toBe(true);
    expect(decoded.ok && decoded.value.info.get('info')).toBe(info);
  });

  it('frames one gRPC message and refuses anything else', () => {
    const body = grpcFrame(Uint8Array.from([1, 2, 3]));
    expect(grpcMessage(body)).toEqual({ ok: true, value: Uint8Array.from([1, 2, 3]) });
    expect(grpcMessage(body.subarray(0, 6)).ok).toBe(false);
    expect(grpcMessage(Uint8Array.from([1, 0, 0, 0, 0])).ok).toBe(false);
    expect(grpcMessage(Uint8Array.from([0, 0xff, 0, 0, 0]), 1024).ok).toBe(false);
  });
});

describe('the codec is a parser of hostile bytes', () => {
  it('refuses a truncated length, a bad wire type, an overlong varint and too many fields', () => {
    expect(decodeFields(Uint8Array.from([0x0a, 0x05, 0x01])).ok).toBe(false);
    expect(decodeFields(Uint8Array.from([0x0b])).ok).toBe(false);
    expect(decodeFields(Uint8Array.from([0x08, ...new Array<number>(11).fill(0xff)])).ok).toBe(false);
    expect(decodeFields(new Uint8Array((MAX_FIELDS + 1) * 2).map((_, i) => (i % 2 === 0 ? 0x08 : 0x01))).ok).toBe(
      false,
    );
    expect(decodeListPodSandbox(Uint8Array.from([0x0a, 0x02, 0x0a, 0x01, 0xff])).ok).toBe(false);
  });

  it('never throws on random or mutated answers, and each answer is bounded', () => {
    const random = prng(34);
    const valid = [
      listAnswer([{ id: 'a', metadata: { uid: 'u' }, labels: { a: 'b' } }]),
      statusAnswer({ status: { id: 'a' }, info: { info: '{"pid":1}' } }),
    ];
    for (let round = 0; round < 20_000; round++) {
      const base = valid[round % 2]!;
      const bytes =
        round % 3 === 0
          ? Uint8Array.from({ length: Math.floor(random() * 64) }, () => Math.floor(random() * 256))
          : Uint8Array.from(base, (byte) => (random() < 0.05 ? Math.floor(random() * 256) : byte)).subarray(
              0,
              Math.floor(random() * (base.length + 1)),
            );
      const list = decodeListPodSandbox(bytes);
      const status = decodePodSandboxStatus(bytes);
      if (list.ok) expect(list.value.length).toBeLessThanOrEqual(bytes.length);
      if (status.ok) expect(status.value.info.size).toBeLessThanOrEqual(bytes.length);
      if (bytes.length < 5) expect(grpcMessage(bytes).ok).toBe(false);
      else expect(typeof grpcMessage(bytes).ok).toBe('boolean');
    }
  });
});
