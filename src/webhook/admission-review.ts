import { fail, ok, type Result } from '../reason/result.js';
import { isRecord } from './json-patch.js';

export const REVIEW_API_VERSION = 'admission.k8s.io/v1';

/** The part of an AdmissionReview request the webhook reads. */
export interface ReviewRequest {
  readonly uid: string;
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly operation: string;
  readonly subResource: string | undefined;
  readonly object: unknown;
}

export type InvalidReview = Result<never, 'AdmissionRequestInvalid'>;

const invalid = (message: string): InvalidReview => fail('AdmissionRequestInvalid', message);

/** An AdmissionReview admission.k8s.io/v1 with a request and its uid; anything else is named. */
export function readReview(text: string): Result<ReviewRequest, 'AdmissionRequestInvalid'> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return invalid(`the request body is not JSON (${(error as Error).message.slice(0, 80)})`);
  }
  if (!isRecord(body)) return invalid('the request body is not a JSON object');
  if (body.apiVersion !== REVIEW_API_VERSION || body.kind !== 'AdmissionReview')
    return invalid(
      `expected an AdmissionReview ${REVIEW_API_VERSION}, got ${describe(body.kind)} ${describe(body.apiVersion)}`,
    );
  const request = body.request;
  if (!isRecord(request)) return invalid('the AdmissionReview has no request');
  if (typeof request.uid !== 'string' || request.uid === '' || request.uid.length > 128)
    return invalid('the AdmissionReview request has no uid (1 to 128 characters)');
  const kind = isRecord(request.kind) ? request.kind : {};
  return ok({
    uid: request.uid,
    kind: { group: text_(kind.group), version: text_(kind.version), kind: text_(kind.kind) },
    operation: text_(request.operation),
    subResource: typeof request.subResource === 'string' && request.subResource ? request.subResource : undefined,
    object: request.object,
  });
}

/** A Pod CREATE, the only request the webhook mutates (a subresource such as pods/ephemeralcontainers is not). */
export function isPodCreate(request: ReviewRequest): boolean {
  return (
    request.kind.group === '' &&
    request.kind.version === 'v1' &&
    request.kind.kind === 'Pod' &&
    request.operation === 'CREATE' &&
    request.subResource === undefined
  );
}

/**
 * The request uid of a body the webhook will not parse (oversized, cut short, malformed), so its
 * decision still reaches the API server: the API server writes `request.uid` first.
 */
export function leadingUid(head: string): string {
  const match = /"request"\s*:\s*\{\s*"uid"\s*:\s*"([^"\\]{1,128})"/.exec(head.slice(0, 1024));
  return match?.[1] ?? '';
}

export interface ReviewResponse {
  readonly apiVersion: typeof REVIEW_API_VERSION;
  readonly kind: 'AdmissionReview';
  readonly response: {
    readonly uid: string;
    readonly allowed: boolean;
    readonly patchType?: 'JSONPatch';
    readonly patch?: string;
    readonly status?: { readonly code: number; readonly message: string };
    /** Shown to the client that created the pod (kubectl, a controller's log). */
    readonly warnings?: readonly string[];
  };
}

export function reviewResponse(
  uid: string,
  decision: { allowed: boolean; patch?: readonly unknown[]; message?: string; warnings?: readonly string[] },
): ReviewResponse {
  const patch = decision.patch?.length
    ? { patchType: 'JSONPatch' as const, patch: Buffer.from(JSON.stringify(decision.patch)).toString('base64') }
    : {};
  const status = decision.message ? { status: { code: decision.allowed ? 200 : 400, message: decision.message } } : {};
  return {
    apiVersion: REVIEW_API_VERSION,
    kind: 'AdmissionReview',
    response: {
      uid,
      allowed: decision.allowed,
      ...patch,
      ...status,
      ...(decision.warnings?.length ? { warnings: [...decision.warnings] } : {}),
    },
  };
}

function text_(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 64)) : typeof value;
}
