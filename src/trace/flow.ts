import type { Chain, Provenance } from '../rules/model.js';
import type { Outcome, TraceStep } from './outcome.js';
import type { Region } from './region.js';

/** A position in the chains: immutable, so a region split at a rule shares its callers. */
export interface Frame {
  readonly chain: Chain;
  readonly next: number;
  readonly parent: Frame | undefined;
  readonly depth: number;
}

/** The rules that matched so far, newest first, shared between the regions a split makes. */
export interface Steps {
  readonly step: TraceStep;
  readonly previous: Steps | undefined;
  readonly length: number;
}

export interface NatBinding {
  readonly outcome: Outcome;
  readonly decidedBy: Provenance;
}

/** One region of packets on its way through the hook, with everything the kernel remembers. */
export interface Flow {
  readonly region: Region;
  /** Index into the hooked base chains. */
  readonly hooked: number;
  readonly frame: Frame | undefined;
  readonly path: Steps | undefined;
  /** Unmodelled rules this region was assumed to match or not. */
  readonly assumed: readonly Provenance[];
  /** The last RETURN on the way in this base chain: it let the region reach the policy. */
  readonly lastReturn: Provenance | undefined;
  readonly lastDecision: Provenance | undefined;
  /** NAT binding made by an earlier priority group (later nat chains are skipped). */
  readonly nat: NatBinding | undefined;
  /** NAT binding made in the current priority group. */
  readonly groupNat: NatBinding | undefined;
  readonly tproxy: { readonly port: number; readonly at: Provenance } | undefined;
  /** The NOTRACK that kept the packet out of conntrack: the NAT core never sees it. */
  readonly untracked: Provenance | undefined;
  /**
   * The region's conntrack states as the trace began, while chains before conntrack (or an untracked
   * packet) show the rules another state; every piece is reported with these.
   */
  readonly ctstates: number | undefined;
}

/** Paths longer than this keep their first steps only: a report never needs more. */
const MAX_PATH = 256;

export function withStep(flow: Flow, step: TraceStep): Flow {
  return { ...flow, path: extended(flow.path, step) };
}

/** The steps with one more; for callers that change other fields of the flow in the same copy. */
export function extended(path: Steps | undefined, step: TraceStep): Steps | undefined {
  const length = path?.length ?? 0;
  if (length >= MAX_PATH) return path;
  return { step, previous: path, length: length + 1 };
}

export function pathOf(steps: Steps | undefined): TraceStep[] {
  const out: TraceStep[] = [];
  for (let node = steps; node; node = node.previous) out.push(node.step);
  return out.reverse();
}
