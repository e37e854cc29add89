import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { TermBudget } from '../../src/rules/limit-checks.js';
import { BYTES_PER_TERM, JSON_TREE_BYTES_PER_BYTE, MAX_RULESET_BYTES } from '../../src/rules/limits.js';
import type { ParseResult } from '../../src/rules/model.js';
import { parseNftJson } from '../../src/rules/nft-json/parse-nft-json.js';
import { CORPUS } from '../explain/corpus.js';

/**
 * `nft -j list ruleset` (nftables 1.0.6) in a fresh network namespace after loading
 *   table inet mesh-lists { chain output { type nat hook output priority -100; policy accept;
 *     oifname { "lo", "eth0" } meta skuid { 1337, 2102 } meta l4proto { tcp, udp }
 *     ct state { established, related } counter redirect to :15001 } }
 * One rule whose interface, owner, protocol and ctstate matches each list two elements.
 */
const NFT_LISTS =
  '{"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}, {"table": {"family": "inet", "name": "mesh-lists", "handle": 1}}, {"chain": {"family": "inet", "table": "mesh-lists", "name": "output", "handle": 1, "type": "nat", "hook": "output", "prio": -100, "policy": "accept"}}, {"rule": {"family": "inet", "table": "mesh-lists", "chain": "output", "handle": 6, "expr": [{"match": {"op": "==", "left": {"meta": {"key": "oifname"}}, "right": {"set": ["lo", "eth0"]}}}, {"match": {"op": "==", "left": {"meta": {"key": "skuid"}}, "right": {"set": [1337, 2102]}}}, {"match": {"op": "==", "left": {"meta": {"key": "l4proto"}}, "right": {"set": ["tcp", "udp"]}}}, {"match": {"op": "==", "left": {"ct": {"key": "state"}}, "right": {"set": ["established", "related"]}}}, {"counter": {"packets": 0, "bytes": 0}}, {"redirect": {"port": 15001}}]}}]}\n';

const LINKERD_PORTS = readFileSync(
  path.join(CORPUS, 'linkerd/control-plane-default', 'iptables-nft-save.v4.txt'),
  'utf8',
);

const EXCEEDED =
  "the rules would take more than 128 MiB of memory to analyse (the dumps' text, 160 bytes per rule, match, action and list element, 12 bytes per byte of nft JSON), the limit for one analysis; a pod's NAT rules take well under 1 MiB";

/** A budget with exactly `left` bytes to spend before the analysis is over the cap. */
const budgetLeaving = (left: number): TermBudget => new TermBudget(MAX_RULESET_BYTES - left);

function expectTooLarge(result: ParseResult, source: string): void {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.error).toMatchObject({ reason: 'RulesTooLarge', source, message: EXCEEDED });
}

describe('TermBudget: every list element of a rule is charged', () => {
  it('the nft rule with two interfaces, two uids, two protocols and two ct states costs 10 terms', () => {
    // 1 (the rule) + 1 action (redirect; a counter decides nothing and is not kept) + 2 + 2 + 2 + 2 list elements.
    const cost = NFT_LISTS.length * JSON_TREE_BYTES_PER_BYTE + 10 * BYTES_PER_TERM;
    const fits = parseNftJson(NFT_LISTS, 'nft -j list ruleset', budgetLeaving(cost));
    expect(fits.ok).toBe(true);
    expectTooLarge(parseNftJson(NFT_LISTS, 'nft -j list ruleset', budgetLeaving(cost - 1)), 'nft -j list ruleset');
  });

  it("Linkerd's control-plane dump, whose multiport rules list two and four ports, costs 36 terms", () => {
    // Each rule is 1, plus 1 per action and per list element (a comment counts 1):
    // PREROUTING and OUTPUT jumps: 3 + 3; --uid-owner 2102 RETURN: 4; -o lo RETURN: 4;
    // -p tcp --dports 4567,4568 RETURN: 6; -p tcp REDIRECT: 4;
    // -p tcp --dports 4190,4191,4567,4568 RETURN: 8; -p tcp REDIRECT: 4.
    const cost = 36 * BYTES_PER_TERM;
    const options = { backend: 'iptables-nft', family: 'ipv4', source: 'iptables-nft-save' } as const;
    expect(parseIptablesSave(LINKERD_PORTS, { ...options, budget: budgetLeaving(cost) }).ok).toBe(true);
    expectTooLarge(
      parseIptablesSave(LINKERD_PORTS, { ...options, budget: budgetLeaving(cost - 1) }),
      'iptables-nft-save',
    );
  });
});
