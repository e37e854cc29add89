import { bytesText, MAX_RULESET_TERMS } from './limits.js';
import { parseFailure, type Match, type ParseFailed, type Rule } from './model.js';

/**
 * Refuses a dump over `cap` bytes of UTF-8 before any of it is parsed. A string has at least as
 * many UTF-8 bytes as UTF-16 units and at most three per unit, so the length alone settles most
 * cases without a pass over the text.
 */
export function oversizeText(text: string, source: string, cap: number, what: string): ParseFailed | undefined {
  if (text.length <= cap / 3) return undefined;
  if (text.length <= cap && Buffer.byteLength(text, 'utf8') <= cap) return undefined;
  return parseFailure(source, 1, `${what} is larger than ${bytesText(cap)}, the limit for one dump; a pod's NAT rules are a few kilobytes`, 'RulesTooLarge');
}

/**
 * Counts what the parsers build, shared by every dump of one analysis so the whole model stays
 * bounded: each rule, each match and action, each element of a list beyond the first.
 */
export class TermBudget {
  private spent = 0;

  /** false once the dumps hold more than MAX_RULESET_TERMS terms together. */
  spendRule(rule: Pick<Rule, 'matches' | 'actions'>): boolean {
    let terms = 1 + rule.actions.length;
    for (const match of rule.matches) terms += matchTerms(match);
    this.spent += terms;
    return this.spent <= MAX_RULESET_TERMS;
  }

  exceeded(): string {
    return `the rules hold more than ${MAX_RULESET_TERMS} rules, match and action terms and list elements, the limit for one analysis; a pod's NAT rules hold a few hundred`;
  }
}

function matchTerms(match: Match): number {
  switch (match.kind) {
    case 'address':
      return match.cidrs.length;
    case 'interface':
      return match.names.length;
    case 'owner':
      return match.ids.length;
    case 'protocol':
      return match.protocols.length;
    case 'ctstate':
      return match.states.length;
    case 'port':
      return match.ports.kind === 'ranges' ? Math.max(1, match.ports.ranges.length) : 1;
    default:
      return 1;
  }
}
