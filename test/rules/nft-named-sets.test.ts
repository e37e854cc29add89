import { describe, expect, it } from 'vitest';
import { nftCase } from '../explain/nft-case.js';

/**
 * nft prints a named set where a rule uses it as `"right": "@name"` and lists the set's elements
 * apart, in a `set` object (checked with nft 1.0.6). A reader that takes "@name" for a protocol or
 * an interface called "@name" never matches the rule, so a `return` of every TCP packet through a
 * set passes unseen. The set `protos` below holds tcp, exactly as nft lists it.
 */
const { items, explainWith: explainList } = nftCase('istio-nftables/basic-exclude-nic');
const outputIndex = items.findIndex((item) => item['chain']?.['name'] === 'output');
const table = 'istio-proxy-nat';

/** The case's dump with a named set after its table and `rule` first in its output chain. */
function explainWith(setObject: unknown, expr: readonly unknown[], name: string): ReturnType<typeof explainList> {
  const rule = { rule: { family: 'inet', table, chain: 'output', handle: 40, expr } };
  return explainList(
    [...items.slice(0, 2), setObject, ...items.slice(2, outputIndex + 1), rule, ...items.slice(outputIndex + 1)],
    name,
  );
}

describe('nft JSON: a rule that matches through a named set', () => {
  it('`meta l4proto @protos return` first in output (protos = { tcp }) is not a pass', async () => {
    const protos = { set: { family: 'inet', name: 'protos', table, type: 'inet_proto', handle: 50, elem: ['tcp'] } };
    const result = await explainWith(
      protos,
      [{ match: { op: '==', left: { meta: { key: 'l4proto' } }, right: '@protos' } }, { return: null }],
      'protos',
    );
    expect(result.stdout.split('\n')[0]).toBe(
      'interlock explain: UNKNOWN: 1 of 12 expectations cannot be decided from these rules (not a pass)',
    );
    expect(result.stdout).toContain(
      '[assumed: assumed matching: {"match":{"op":"==","left":{"meta":{"key":"l4proto"}},"right":"@protos"}}]',
    );
    expect(result.exitCode).toBe(126);
  });

  it('`oifname @ifs return` first in output (ifs = { "eth0" }) is not a pass', async () => {
    const ifs = { set: { family: 'inet', name: 'ifs', table, type: 'ifname', handle: 50, elem: ['eth0'] } };
    const result = await explainWith(
      ifs,
      [{ match: { op: '==', left: { meta: { key: 'oifname' } }, right: '@ifs' } }, { return: null }],
      'ifs',
    );
    expect(result.stdout.split('\n')[0]).toBe(
      'interlock explain: UNKNOWN: 1 of 12 expectations cannot be decided from these rules (not a pass)',
    );
    expect(result.stdout).toContain(
      '[assumed: assumed matching: {"match":{"op":"==","left":{"meta":{"key":"oifname"}},"right":"@ifs"}}]',
    );
    expect(result.exitCode).toBe(126);
  });
});
