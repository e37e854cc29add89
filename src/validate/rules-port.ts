import type { InterceptionSpec } from '../config/interception.js';
import type { InspectOptions, RulesInspection } from '../rules-check/inspection.js';

/** What the validator needs of the rules engine: one call, answering in plain data. */
export type RulesInspectionResult = RulesInspection;

export type InspectRules = (spec: InterceptionSpec, options: InspectOptions) => Promise<RulesInspectionResult>;
