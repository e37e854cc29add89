import { fail, ok, type Result } from '../../reason/result.js';
import { concat, decodeFields, lengthField, text, varintField, type WireValue } from './protobuf.js';

/**
 * The CRI v1 calls the agent makes: the two of the re-check, encoded and decoded by field number
 * (kubernetes/cri-api pkg/apis/runtime/v1/api.proto; e2e/cri/proto holds the vendored copy the
 * tests cross-check against grpc-js): ListPodSandbox filtered by the pod uid label and the READY
 * state, and PodSandboxStatus with verbose set; and the CNI audit's verbose Status.
 */
const POD_UID_LABEL = 'io.kubernetes.pod.uid';

type Invalid = 'RuntimeAnswerInvalid';

export interface SandboxEntry {
  readonly id: string;
  readonly uid: string;
  readonly ready: boolean;
}

export interface SandboxStatus {
  readonly id: string;
  readonly ready: boolean;
  /** The verbose info map: JSON text per key (`info` for containerd and CRI-O). */
  readonly info: ReadonlyMap<string, string>;
}

/** ListPodSandboxRequest{filter{state{READY}, label_selector{io.kubernetes.pod.uid: uid}}}. */
export function listPodSandboxRequest(uid: string): Uint8Array {
  const entry = concat([lengthField(1, POD_UID_LABEL), lengthField(2, uid)]);
  // PodSandboxStateValue{state: SANDBOX_READY}: READY is 0, proto3's default, so the wrapper is empty.
  const filter = concat([lengthField(2, new Uint8Array()), lengthField(3, entry)]);
  return lengthField(1, filter);
}

/** PodSandboxStatusRequest{pod_sandbox_id, verbose: true}. */
export function podSandboxStatusRequest(id: string): Uint8Array {
  return concat([lengthField(1, id), varintField(2, 1)]);
}

/** StatusRequest{verbose: true}: the info map holds containerd's cniconfig and lastCNILoadStatus. */
export function statusRequest(): Uint8Array {
  return varintField(1, 1);
}

const bytesOf = (item: WireValue): Uint8Array | undefined => (item.wire === 2 ? item.value : undefined);

function stringField(fields: readonly WireValue[], field: number): Result<string, Invalid> {
  const found = fields.filter((item) => item.field === field).at(-1);
  if (!found) return ok('');
  const bytes = bytesOf(found);
  return bytes ? text(bytes) : fail('RuntimeAnswerInvalid', `field ${field} is not a string`);
}

function stateField(fields: readonly WireValue[], field: number): Result<boolean, Invalid> {
  const found = fields.filter((item) => item.field === field).at(-1);
  if (!found) return ok(true);
  return found.wire === 0 ? ok(found.value === 0n) : fail('RuntimeAnswerInvalid', `field ${field} is not an enum`);
}

function sandboxOf(bytes: Uint8Array): Result<SandboxEntry, Invalid> {
  const fields = decodeFields(bytes);
  if (!fields.ok) return fields;
  const id = stringField(fields.value, 1);
  if (!id.ok) return id;
  const metadata = fields.value.filter((item) => item.field === 2).at(-1);
  const metadataBytes = metadata ? bytesOf(metadata) : new Uint8Array();
  if (!metadataBytes) return fail('RuntimeAnswerInvalid', 'a sandbox whose metadata is not a message');
  const metadataFields = decodeFields(metadataBytes);
  if (!metadataFields.ok) return metadataFields;
  const uid = stringField(metadataFields.value, 2);
  if (!uid.ok) return uid;
  const ready = stateField(fields.value, 3);
  if (!ready.ok) return ready;
  return ok({ id: id.value, uid: uid.value, ready: ready.value });
}

export function decodeListPodSandbox(bytes: Uint8Array): Result<SandboxEntry[], Invalid> {
  const fields = decodeFields(bytes);
  if (!fields.ok) return fields;
  const items: SandboxEntry[] = [];
  for (const item of fields.value) {
    if (item.field !== 1) continue;
    const body = bytesOf(item);
    if (!body) return fail('RuntimeAnswerInvalid', 'a sandbox item that is not a message');
    const sandbox = sandboxOf(body);
    if (!sandbox.ok) return sandbox;
    items.push(sandbox.value);
  }
  return ok(items);
}

function mapEntry(bytes: Uint8Array): Result<[string, string], Invalid> {
  const fields = decodeFields(bytes);
  if (!fields.ok) return fields;
  const key = stringField(fields.value, 1);
  if (!key.ok) return key;
  const value = stringField(fields.value, 2);
  if (!value.ok) return value;
  return ok([key.value, value.value]);
}

export function decodePodSandboxStatus(bytes: Uint8Array): Result<SandboxStatus, Invalid> {
  const fields = decodeFields(bytes);
  if (!fields.ok) return fields;
  const status = fields.value.filter((item) => item.field === 1).at(-1);
  const statusBytes = status ? bytesOf(status) : undefined;
  if (!statusBytes) return fail('RuntimeAnswerInvalid', 'a sandbox status without its status message');
  const statusFields = decodeFields(statusBytes);
  if (!statusFields.ok) return statusFields;
  const id = stringField(statusFields.value, 1);
  if (!id.ok) return id;
  const ready = stateField(statusFields.value, 3);
  if (!ready.ok) return ready;
  const info = infoMap(fields.value);
  return info.ok ? ok({ id: id.value, ready: ready.value, info: info.value }) : info;
}

/** The `map<string, string> info = 2` of a verbose answer (PodSandboxStatus's and Status's). */
function infoMap(fields: readonly WireValue[]): Result<Map<string, string>, Invalid> {
  const info = new Map<string, string>();
  for (const item of fields) {
    if (item.field !== 2) continue;
    const body = bytesOf(item);
    if (!body) return fail('RuntimeAnswerInvalid', 'an info entry that is not a message');
    const entry = mapEntry(body);
    if (!entry.ok) return entry;
    info.set(...entry.value);
  }
  return ok(info);
}

/** StatusResponse's info map (its status conditions are the kubelet's business, not the audit's). */
export function decodeStatusInfo(bytes: Uint8Array): Result<Map<string, string>, Invalid> {
  const fields = decodeFields(bytes);
  return fields.ok ? infoMap(fields.value) : fields;
}
