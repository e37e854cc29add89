import type { Family } from '../addr/ip.js';
import type { TraceHook } from '../trace/packet.js';
import { coalesce, intersect, subtract, type Constraint, type Region } from '../trace/region.js';
import type { Expected } from './expected.js';

/**
 * What the configuration requires of one region of packet space. The expectations of a family and
 * hook are disjoint and together cover the whole space the trace starts from: a region the
 * configuration does not speak of (`expected` undefined) is listed too, so nothing is silently
 * left out.
 */
export interface Expectation {
  /** Stable identifier, e.g. `ipv4/outbound/app`. */
  readonly id: string;
  readonly family: Family;
  readonly hook: TraceHook;
  /** Which part of the configuration asks for this answer (or why it says nothing). */
  readonly because: string;
  readonly expected: Expected | undefined;
  /** Disjoint regions; empty when earlier expectations took all of it. */
  readonly regions: readonly Region[];
}

/**
 * Expectations as an ordered list, first claim wins, the way a rule writer thinks ("the proxy's
 * own traffic is never redirected; then excluded ports; then ..."). Each claim gets what earlier
 * claims left of its constraint.
 */
export class ExpectationList {
  private readonly list: Expectation[] = [];
  private unclaimed: Region[];

  constructor(
    private readonly family: Family,
    private readonly hook: TraceHook,
    space: Region,
  ) {
    this.unclaimed = [space];
  }

  claim(id: string, because: string, constraint: Constraint, expected: Expected | undefined): void {
    const regions: Region[] = [];
    const rest: Region[] = [];
    for (const region of this.unclaimed) {
      const inside = intersect(region, constraint);
      if (inside) regions.push(inside);
      rest.push(...subtract(region, constraint));
    }
    this.unclaimed = rest;
    this.list.push({ id: `${this.family}/${id}`, family: this.family, hook: this.hook, because, expected, regions });
  }

  /** Everything not yet claimed goes to the last expectation. */
  done(id: string, because: string, expected: Expected | undefined): Expectation[] {
    this.claim(id, because, {}, expected);
    return this.list
      .filter((expectation) => expectation.regions.length > 0)
      .map((expectation) => ({ ...expectation, regions: coalesce(expectation.regions) }));
  }
}
