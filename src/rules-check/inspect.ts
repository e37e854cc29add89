import type { InterceptionSpec } from '../config/interception.js';
import { cannotRead, type InspectOptions, type RulesInspection } from './inspection.js';
import { readCapabilities } from '../rules/read/capabilities.js';

export type { InspectOptions, RulesInspection } from './inspection.js';

/**
 * The validator's one call: read the pod's rules from every backend, trace the configuration's
 * packet questions, and answer in plain data. Never throws; anything unexpected fails closed.
 */
export async function inspectLiveRules(spec: InterceptionSpec, options: InspectOptions): Promise<RulesInspection> {
  try {
    return await inspect(spec, options);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { status: 'unreadable', reason: 'RulesUnreadable', message: `the rules could not be inspected: ${why}`, evidence: [why], report: { error: why } };
  }
}

async function inspect(spec: InterceptionSpec, options: InspectOptions): Promise<RulesInspection> {
  const capabilities = await readCapabilities();
  if (capabilities && !capabilities.netAdmin) return cannotRead(options.mode, 'no CAP_NET_ADMIN to read iptables/nftables', { capabilities });
  // Loaded only once reading is possible: execa and the engine cost tens of milliseconds at
  // start-up, which a capability-less init container (the common case) must not pay.
  const [{ readLiveRules }, { decideInspection }] = await Promise.all([import('../rules/read/read-live.js'), import('./decide.js')]);
  const outcomes = await readLiveRules(options.families, options.timeoutMs);
  return decideInspection(spec, outcomes, options);
}
