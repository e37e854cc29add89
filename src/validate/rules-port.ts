import type { Family, IpAddress } from '../addr/ip.js';
import type { InterceptionSpec } from '../config/interception.js';

/** What the validator needs of the rules engine: one call, answering in plain data. */
export interface RulesInspectionResult {
  readonly status: 'passed' | 'failed' | 'unknown' | 'not-inspected' | 'unreadable';
  readonly reason?: string;
  readonly message: string;
  readonly evidence: readonly string[];
  readonly report: unknown;
}

export type InspectRules = (
  spec: InterceptionSpec,
  options: {
    readonly families: readonly Family[];
    readonly mode: 'auto' | 'required';
    readonly timeoutMs: number;
    readonly sampleDestinations?: Partial<Record<Family, IpAddress>>;
  },
) => Promise<RulesInspectionResult>;
