import { hostPort } from '../addr/host-port.js';
import { formatIp, type IpAddress } from '../addr/ip.js';
import type { Provenance } from '../rules/model.js';

/** Where a packet ends up after the hook's tables. */
export type Outcome =
  /** REDIRECT to a local port; undefined keeps each packet's own destination port. */
  | { readonly kind: 'redirect'; readonly port: number | undefined }
  | { readonly kind: 'dnat'; readonly address: IpAddress | undefined; readonly port: number | undefined }
  | { readonly kind: 'tproxy'; readonly port: number }
  /** Left alone: the connection goes to its original destination. */
  | { readonly kind: 'accept' }
  | { readonly kind: 'drop' }
  /** The rules cannot be evaluated here; `rule` names the one at fault when there is one. */
  | { readonly kind: 'unknown'; readonly why: string; readonly rule?: Provenance };

export type StepEffect = 'matched' | 'jump' | 'goto' | 'return' | 'verdict' | 'policy' | 'assumed';

/** One rule that matched on the way (or a chain's policy, with position 0). */
export interface TraceStep {
  readonly at: Provenance;
  readonly effect: StepEffect;
  readonly note?: string;
}

export interface TraceResult {
  readonly outcome: Outcome;
  /** The rules that matched, in order, across every table the hook ran. */
  readonly path: readonly TraceStep[];
  /** The rule (or policy) that decided the outcome. */
  readonly decidedBy: Provenance | undefined;
}

export function describeOutcome(outcome: Outcome): string {
  switch (outcome.kind) {
    case 'redirect':
      return outcome.port === undefined
        ? 'redirected to its own port on this host'
        : `redirected to local port ${outcome.port}`;
    case 'dnat':
      return `DNAT to ${dnatTarget(outcome.address, outcome.port)}`;
    case 'tproxy':
      return `diverted by TPROXY to port ${outcome.port}`;
    case 'accept':
      return 'not redirected (original destination)';
    case 'drop':
      return 'dropped';
    case 'unknown':
      return `unknown (${outcome.why})`;
  }
}

/** `10.0.0.9:15001`, `[fd00::1]:15001`, or `the same address:15001` when only the port changes. */
function dnatTarget(address: IpAddress | undefined, port: number | undefined): string {
  const host = address ? formatIp(address) : 'the same address';
  return port === undefined ? host : hostPort(host, port);
}

export function sameOutcome(a: Outcome, b: Outcome): boolean {
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'redirect':
    case 'tproxy':
      return a.port === (b as typeof a).port;
    case 'dnat': {
      const other = b as typeof a;
      return (
        a.port === other.port &&
        a.address?.value === other.address?.value &&
        a.address?.family === other.address?.family
      );
    }
    case 'unknown':
      return false;
    default:
      return true;
  }
}
