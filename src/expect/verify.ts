import type { Family } from '../addr/ip.js';
import type { InterceptionSpec } from '../config/interception.js';
import type { Ruleset } from '../rules/model.js';
import { connectionSpace } from '../trace/connection-space.js';
import { buildInterfaceAtoms, type InterfaceAtoms } from '../trace/interface-atoms.js';
import { interfacePatterns } from '../trace/interface-patterns.js';
import { ANY_MARK, ZERO_MARK } from '../trace/mark-set.js';
import type { TraceHook } from '../trace/packet.js';
import { bitsOf, CT_STATES, type Region } from '../trace/region.js';
import { budgetOf, traceRegion, traceRegionInto } from '../trace/trace-region.js';
import { SpaceChecker, type SpaceCheckResult, type TracedSpace } from './space-check.js';
import { inboundExpectations } from './inbound-expectations.js';
import { outboundExpectations } from './outbound-expectations.js';

/**
 * The whole analysis's work bound, shared by every family and hook: a rule visited by a region
 * counts one, a region split off one plus one per 32 intervals it copies. Real rulesets need a few
 * thousand; a hostile one stops here with "unknown" within a second or two.
 */
const ANALYSIS_BUDGET = 4_000_000;

/** The packet space a hook's expectations speak of: TCP (and UDP for captured DNS), new connections. */
function packetSpace(spec: InterceptionSpec, family: Family, hook: TraceHook, atoms: InterfaceAtoms): Region {
  const output = hook === 'output';
  return {
    ...connectionSpace(family, atoms.all),
    protocols: output && spec.dnsCapture ? 3 : 1,
    // A local socket may carry any SO_MARK; a packet arriving from another namespace carries none.
    mark: output ? ANY_MARK : ZERO_MARK,
    ctstates: bitsOf(CT_STATES, !output && spec.dropInvalid ? ['new', 'invalid'] : ['new']),
  };
}

/** One family and hook's scope: its packet space and what the configuration expects of it. */
interface SpaceToCheck {
  readonly scope: TracedSpace['scope'];
  readonly space: Region;
  readonly expectations: TracedSpace['expectations'];
}

/** Every family's output and prerouting spaces, in the order both analyses walk them. */
function* spacesToCheck(
  ruleset: Ruleset,
  spec: InterceptionSpec,
  families: readonly Family[],
): Generator<SpaceToCheck> {
  const atoms = buildInterfaceAtoms([
    ...interfacePatterns(ruleset),
    ...spec.excludeInterfaces,
    ...spec.rerouteInterfaces,
  ]);
  for (const family of families) {
    for (const hook of ['output', 'prerouting'] as const) {
      const space = packetSpace(spec, family, hook, atoms);
      const expectations =
        hook === 'output'
          ? outboundExpectations(spec, family, atoms, space)
          : inboundExpectations(spec, family, atoms, space);
      yield { scope: { family, hook, atoms }, space, expectations };
    }
  }
}

/** Every expectation of the configuration, checked over the whole packet space of each family. */
export function verifyRuleset(
  ruleset: Ruleset,
  spec: InterceptionSpec,
  families: readonly Family[],
  limit: number = ANALYSIS_BUDGET,
  deadline?: { readonly at: number; readonly now: () => number },
): SpaceCheckResult {
  const budget = budgetOf(limit, undefined, deadline);
  const checker = new SpaceChecker();
  // Pieces are checked as they are made and then dropped: memory stays flat however many there are.
  for (const { scope, space, expectations } of spacesToCheck(ruleset, spec, families))
    traceRegionInto(ruleset, scope, space, budget, checker.space(scope, expectations, space));
  return checker.result();
}

/** Each family and hook's space traced through the rules, beside its expectations (every piece kept: for tests and small rulesets). */
export function traceSpaces(
  ruleset: Ruleset,
  spec: InterceptionSpec,
  families: readonly Family[],
  limit: number = ANALYSIS_BUDGET,
): TracedSpace[] {
  const budget = budgetOf(limit);
  return Array.from(spacesToCheck(ruleset, spec, families), ({ scope, space, expectations }) => ({
    scope,
    pieces: traceRegion(ruleset, scope, space, budget),
    expectations,
    space,
  }));
}
