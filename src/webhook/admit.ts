import type { JsonShapeLimits } from '../file/json-shape.js';
import { isPodCreate, leadingUid, readReview, reviewResponse, type ReviewResponse } from './admission-review.js';
import { jsonShapeProblem } from './json-shape.js';
import { ambientPatch } from './ambient-patch.js';
import { podPatch, type ContainerDecision, type PatchSettings } from './validator-patch.js';

/**
 * Which of the webhook's entries sent the request (its path): `validators` replaces the meshes'
 * own validators; `ambient` adds Interlock's to a pod the API server's selectors say Istio
 * ambient captures (webhook-manifest.ts).
 */
export type AdmissionScope = 'validators' | 'ambient';

/** The path each scope is served on. */
export const SCOPE_PATHS: Readonly<Record<AdmissionScope, string>> = { validators: '/mutate', ambient: '/ambient' };

/** What a request the webhook cannot read gets: `allow` leaves the pod as the mesh made it (its own validator still runs). */
export type OnError = 'allow' | 'deny';

/** Why a request was answered without reading it: each is a metric label and a log field. */
export type InvalidCause = 'malformed' | 'too-large' | 'too-complex' | 'deadline' | 'busy' | 'internal';

export interface Admission {
  readonly response: ReviewResponse;
  /**
   * patched: a patch returned; unchanged: a validator already Interlock's; skipped: nothing to do;
   * denied: the pod forges Interlock's plumbing; invalid: see cause.
   */
  readonly outcome: 'patched' | 'unchanged' | 'skipped' | 'denied' | 'invalid';
  readonly cause?: InvalidCause;
  /** The validator was added (the ambient path), not put in a mesh validator's place. */
  readonly added?: boolean;
  readonly message?: string;
  readonly containers: readonly ContainerDecision[];
}

/**
 * The whole decision for one request body: pure, so dry-run requests are as safe as any. The
 * body's shape is bounded before it is parsed, so the parse and every walk of the pod after it
 * stay within the stack and the memory the server is sized for (webhook-budget.ts).
 */
export function admit(
  body: string,
  settings: PatchSettings,
  onError: OnError,
  shape: JsonShapeLimits,
  scope: AdmissionScope = 'validators',
): Admission {
  const problem = jsonShapeProblem(body, shape);
  if (problem) return refuse(leadingUid(body), 'too-complex', problem, onError, scope);
  const review = readReview(body);
  if (!review.ok) return refuse(leadingUid(body), 'malformed', review.error.message, onError, scope);
  const request = review.value;
  if (!isPodCreate(request))
    return { response: reviewResponse(request.uid, { allowed: true }), outcome: 'skipped', containers: [] };
  const { ops, containers, warnings, denial } = (scope === 'ambient' ? ambientPatch : podPatch)(
    request.object,
    settings,
  );
  if (denial)
    return {
      response: reviewResponse(request.uid, { allowed: false, message: `interlock webhook: ${denial}` }),
      outcome: 'denied',
      message: denial,
      containers,
    };
  const outcome = ops.length ? 'patched' : containers.some((c) => c.outcome === 'unchanged') ? 'unchanged' : 'skipped';
  const added = scope === 'ambient' && outcome === 'patched';
  return {
    response: reviewResponse(request.uid, { allowed: true, patch: ops, warnings }),
    outcome,
    containers,
    ...(added ? { added } : {}),
  };
}

/** What admitting an unread request unchanged leaves the pod with, by the path it came on. */
const UNREAD_ALLOWED: Readonly<Record<AdmissionScope, string>> = {
  validators:
    "admitted unchanged: no Interlock validator was put in (a mesh's own validator, if the pod has one, stays)",
  ambient: 'admitted unchanged: no validator was added (Istio ambient renders none of its own)',
};

/**
 * The configured decision for a request that was not read (cut off, oversized, too slow, or over
 * the budget): it says which, and that no validator was added.
 */
export function refuse(
  uid: string,
  cause: InvalidCause,
  message: string,
  onError: OnError,
  scope: AdmissionScope = 'validators',
): Admission {
  const sentence = `interlock webhook: ${message}; ${onError === 'allow' ? UNREAD_ALLOWED[scope] : 'denied (--on-error deny): no validator was added'}`;
  return {
    response: reviewResponse(uid, { allowed: onError === 'allow', message: sentence }),
    outcome: 'invalid',
    cause,
    message,
    containers: [],
  };
}
