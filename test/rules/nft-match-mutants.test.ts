import { describe, expect, it } from 'vitest';
import { match, meta, readRule, RETURN } from './nft-rule.js';

/**
 * `match` expressions as nft 1.0.6 prints them in `nft -j list ruleset` (every right-hand side
 * here was printed by nft from the rule its test names), read into the model's matches.
 */

describe('nft match: named sets are not read as their name', () => {
  it('`meta l4proto @protos` is an unknown match, not a protocol called "@protos"', () => {
    const expression = match('==', meta('l4proto'), '@protos');
    expect(readRule([expression, RETURN])).toEqual({
      matches: [{ kind: 'unknown', text: '{"match":{"op":"==","left":{"meta":{"key":"l4proto"}},"right":"@protos"}}' }],
      actions: [{ kind: 'return' }],
      text: '{"match":{"op":"==","left":{"meta":{"key":"l4proto"}},"right":"@protos"}} return',
    });
  });
});
