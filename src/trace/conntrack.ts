import type { Rule } from '../rules/model.js';
import { CT_STATES } from './region.js';

/**
 * Where conntrack and the NAT core sit among a hook's base chains (NF_IP_PRI_CONNTRACK and
 * NF_IP_PRI_NAT_DST, the same for PREROUTING and OUTPUT). Every nat chain runs inside the NAT
 * core, at its priority whatever its own (the kernel refuses a nat chain at -200 or below), so a
 * mangle chain at -150 runs before a nat chain registered at -160. Chains below -200 see packets
 * that have no conntrack entry yet: their `ct state` reads INVALID, they have no connection mark,
 * and a NOTRACK there keeps the packet out of conntrack, and so out of the NAT core, for good.
 */
export const CONNTRACK_PRIORITY = -200;
export const NAT_CORE_PRIORITY = -100;

/** Whether a chain of this priority runs before conntrack, at its very priority (order unknown), or after. */
export type ConntrackStage = 'before' | 'at' | 'after';

export function conntrackStage(priority: number): ConntrackStage {
  if (priority < CONNTRACK_PRIORITY) return 'before';
  return priority === CONNTRACK_PRIORITY ? 'at' : 'after';
}

/** The position a base chain takes in the hook: nat chains at the NAT core's. */
export function runsAt(type: 'nat' | 'filter' | 'route', priority: number): number {
  return type === 'nat' ? NAT_CORE_PRIORITY : priority;
}

export const INVALID_STATE = 1 << CT_STATES.indexOf('invalid');
export const UNTRACKED_STATE = 1 << CT_STATES.indexOf('untracked');

/** What a rule reads or writes of the connection's entry, when it has one. */
export interface ConnectionUse {
  /** A connection mark test, or a save/restore of the mark. */
  readonly mark: boolean;
  /** A `ct state` test or a NOTRACK. */
  readonly state: boolean;
}

export function connectionUse(rule: Rule): ConnectionUse {
  const mark =
    rule.matches.some((match) => match.kind === 'mark' && match.field === 'ctmark') ||
    rule.actions.some((action) => action.kind === 'save-mark' || action.kind === 'restore-mark');
  const state =
    rule.matches.some((match) => match.kind === 'ctstate') || rule.actions.some((action) => action.kind === 'notrack');
  return { mark, state };
}
