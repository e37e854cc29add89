import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/explain-command.js';
import { dumpSets, explainArgv, loadManifest } from '../explain/corpus.js';

/**
 * nft prints a named set where a rule uses it as `"right": "@name"` and lists the set's elements
 * apart, in a `set` object (checked with nft 1.0.6). A reader that takes "@name" for a protocol or
 * an interface called "@name" never matches the rule, so a `return` of every TCP packet through a
 * set passes unseen. The set `protos` below holds tcp, exactly as nft lists it.
 */
const testCase = loadManifest().find((candidate) => candidate.dir === 'istio-nftables/basic-exclude-nic');
const set = testCase && dumpSets(testCase).find((candidate) => candidate.name === 'nftables');
if (!testCase || !set) throw new Error('corpus case istio-nftables/basic-exclude-nic is missing');
const jsonFile = set.files.find(([flag]) => flag === 'nft-ruleset')?.[1] ?? '';
const items = (JSON.parse(readFileSync(jsonFile, 'utf8')) as { nftables: Record<string, Record<string, unknown>>[] }).nftables;
const outputIndex = items.findIndex((item) => item['chain']?.['name'] === 'output');
const table = 'istio-proxy-nat';

const dir = mkdtempSync(join(tmpdir(), 'interlock-named-set-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The case's dump with a named set after its table and `rule` first in its output chain. */
async function explainWith(setObject: unknown, expr: readonly unknown[], name: string) {
  const rule = { rule: { family: 'inet', table, chain: 'output', handle: 40, expr } };
  const list = [...items.slice(0, 2), setObject, ...items.slice(2, outputIndex + 1), rule, ...items.slice(outputIndex + 1)];
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ nftables: list }));
  const argv = explainArgv(testCase as NonNullable<typeof testCase>, set as NonNullable<typeof set>).map((arg) => (arg.startsWith('--nft-ruleset=') ? `--nft-ruleset=${file}` : arg));
  return runExplain(argv, {});
}

describe('nft JSON: a rule that matches through a named set', () => {
  it('`meta l4proto @protos return` first in output (protos = { tcp }) is not a pass', async () => {
    const protos = { set: { family: 'inet', name: 'protos', table, type: 'inet_proto', handle: 50, elem: ['tcp'] } };
    const result = await explainWith(protos, [{ match: { op: '==', left: { meta: { key: 'l4proto' } }, right: '@protos' } }, { return: null }], 'protos');
    expect(result.stdout.split('\n')[0]).toBe('interlock explain: UNKNOWN: 1 of 12 expectations cannot be decided from these rules (not a pass)');
    expect(result.stdout).toContain('[assumed: assumed matching: {"match":{"op":"==","left":{"meta":{"key":"l4proto"}},"right":"@protos"}}]');
    expect(result.exitCode).toBe(126);
  });

  it('`oifname @ifs return` first in output (ifs = { "eth0" }) is not a pass', async () => {
    const ifs = { set: { family: 'inet', name: 'ifs', table, type: 'ifname', handle: 50, elem: ['eth0'] } };
    const result = await explainWith(ifs, [{ match: { op: '==', left: { meta: { key: 'oifname' } }, right: '@ifs' } }, { return: null }], 'ifs');
    expect(result.stdout.split('\n')[0]).toBe('interlock explain: UNKNOWN: 1 of 12 expectations cannot be decided from these rules (not a pass)');
    expect(result.stdout).toContain('[assumed: assumed matching: {"match":{"op":"==","left":{"meta":{"key":"oifname"}},"right":"@ifs"}}]');
    expect(result.exitCode).toBe(126);
  });
});
