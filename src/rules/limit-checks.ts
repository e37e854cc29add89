import { BYTES_PER_TERM, bytesText, JSON_TREE_BYTES_PER_BYTE, MAX_RULESET_BYTES } from './limits.js';
import { parseFailure, type Match, type ParseFailed, type Rule } from './model.js';

/**
 * Refuses a dump over `cap` bytes of UTF-8 before any of it is parsed. A string has at least as
 * many UTF-8 bytes as UTF-16 units and at most three per unit, so the length alone settles most
 * cases without a pass over the text.
 */
export function oversizeText(text: string, source: string, cap: number, what: string): ParseFailed | undefined {
  if (text.length <= cap / 3) return undefined;
  if (text.length <= cap && Buffer.byteLength(text, 'utf8') <= cap) return undefined;
  return parseFailure(
    source,
    1,
    `${what} is larger than ${bytesText(cap)}, the limit for one dump; a pod's NAT rules are a few kilobytes`,
    'RulesTooLarge',
  );
}

/**
 * The memory an analysis takes for its rules, estimated as the parsers go, shared by every dump
 * of one analysis: the dumps' texts (all in memory before parsing starts), the model they build,
 * the trees of nft JSON. A parse that would take it over MAX_RULESET_BYTES stops with
 * RulesTooLarge, so the model never outgrows the cap whatever the input.
 */
export class TermBudget {
  private spent: number;

  /** `textBytes`: the length of every text the analysis holds, charged up front. */
  constructor(textBytes = 0) {
    this.spent = textBytes;
  }

  /** Charges the dumps of one analysis before any is parsed: they are all in memory already. */
  static forTexts(texts: readonly string[]): TermBudget {
    return new TermBudget(texts.reduce((sum, text) => sum + text.length, 0));
  }

  /** false once the analysis is over the cap. */
  spendRule(rule: Pick<Rule, 'matches' | 'actions'>): boolean {
    let terms = 1 + rule.actions.length;
    for (const match of rule.matches) terms += matchTerms(match);
    return this.spend(terms * BYTES_PER_TERM);
  }

  /** false once the analysis is over the cap. */
  spendJsonTree(textLength: number): boolean {
    return this.spend(textLength * JSON_TREE_BYTES_PER_BYTE);
  }

  exceeded(): string {
    return `the rules would take more than ${bytesText(MAX_RULESET_BYTES)} of memory to analyse (the dumps' text, ${BYTES_PER_TERM} bytes per rule, match, action and list element, ${JSON_TREE_BYTES_PER_BYTE} bytes per byte of nft JSON), the limit for one analysis; a pod's NAT rules take well under 1 MiB`;
  }

  private spend(bytes: number): boolean {
    this.spent += bytes;
    return this.spent <= MAX_RULESET_BYTES;
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
