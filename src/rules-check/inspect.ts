import type { InterceptionSpec } from '../config/interception.js';
import { readCapabilities, type Capabilities } from '../rules/read/capabilities.js';
import type { ReadOutcome } from '../rules/read/classify.js';
import { cannotRead, type InspectOptions, type RulesInspection } from './inspection.js';

export type { InspectOptions, RulesInspection } from './inspection.js';

/** Time kept after the analysis for the verdict: the probe's last answers, the message, the exit. */
const VERDICT_MARGIN_MS = 300;

/** The edges the inspection runs through; tests hand in their own. */
export interface InspectionParts {
  readonly readCapabilities: () => Capabilities | undefined | Promise<Capabilities | undefined>;
  readonly readLiveRules: (families: InspectOptions['families'], timeoutMs: number) => Promise<ReadOutcome[]>;
  readonly decideInspection: (
    spec: InterceptionSpec,
    outcomes: readonly ReadOutcome[],
    options: Omit<InspectOptions, 'timeoutMs'>,
  ) => RulesInspection | Promise<RulesInspection>;
}

/**
 * The validator's one call: read the pod's rules from every backend, trace the configuration's
 * expectations over every packet, and answer in plain data. Never throws. A read that fails is an answer of
 * decideInspection; an exception is a bug in the engine (RulesEngineError, an internal error),
 * never "unreadable".
 */
export async function inspectLiveRules(
  spec: InterceptionSpec,
  options: InspectOptions,
  parts?: InspectionParts,
): Promise<RulesInspection> {
  try {
    return await inspect(spec, options, parts ?? liveParts());
  } catch (error) {
    const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const message = `the rules engine failed: ${why}`;
    return { status: 'unknown', reason: 'RulesEngineError', message, evidence: [message], report: { error: why } };
  }
}

async function inspect(
  spec: InterceptionSpec,
  options: InspectOptions,
  parts: InspectionParts,
): Promise<RulesInspection> {
  // The analysis is synchronous: it must stop on its own before the validator's deadline, which
  // no timer can enforce while it runs. The margin leaves time to form and write the verdict.
  const analysisDeadline = performance.now() + Math.max(50, options.timeoutMs - VERDICT_MARGIN_MS);
  const capabilities = await parts.readCapabilities();
  if (capabilities && !capabilities.netAdmin)
    return cannotRead(options.mode, 'no CAP_NET_ADMIN to read iptables/nftables', { capabilities });
  const outcomes = await parts.readLiveRules(options.families, options.timeoutMs);
  return parts.decideInspection(spec, outcomes, { ...options, analysisDeadline });
}

/**
 * Reading and the engine are loaded only once reading is possible: execa and the engine cost tens
 * of milliseconds at start-up, which a capability-less init container (the common case) must not
 * pay. The engine loads while the tools run.
 */
function liveParts(): InspectionParts {
  let engine: Promise<typeof import('./decide.js')> | undefined;
  return {
    readCapabilities,
    readLiveRules: async (families, timeoutMs) => {
      engine = import('./decide.js');
      return (await import('../rules/read/read-live.js')).readLiveRules(families, timeoutMs);
    },
    decideInspection: async (spec, outcomes, options) =>
      (await (engine ?? import('./decide.js'))).decideInspection(spec, outcomes, options),
  };
}
