import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { dumpSets, explainArgv, loadManifest } from './corpus.js';

type NftItem = Record<string, Record<string, unknown>>;

/**
 * A corpus case's native nftables dump, as its list of objects, and `interlock explain` run with
 * the case's own flags on an edited copy of that list (written to a directory removed after the file).
 */
export function nftCase(dir: string): {
  items: NftItem[];
  explainWith: (list: readonly unknown[], name: string) => ReturnType<typeof runExplain>;
} {
  const testCase = loadManifest().find((candidate) => candidate.dir === dir);
  const set = testCase && dumpSets(testCase).find((candidate) => candidate.name === 'nftables');
  if (!testCase || !set) throw new Error(`corpus case ${dir} has no nftables dump`);
  const jsonFile = set.files.find(([flag]) => flag === 'nft-ruleset')?.[1] ?? '';
  const items = (JSON.parse(readFileSync(jsonFile, 'utf8')) as { nftables: NftItem[] }).nftables;
  const tmp = mkdtempSync(join(tmpdir(), 'interlock-nft-case-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const explainWith = (list: readonly unknown[], name: string): ReturnType<typeof runExplain> => {
    const file = join(tmp, `${name}.json`);
    writeFileSync(file, JSON.stringify({ nftables: list }));
    const argv = explainArgv(testCase, set).map((arg) =>
      arg.startsWith('--nft-ruleset=') ? `--nft-ruleset=${file}` : arg,
    );
    return runExplain(argv, {});
  };
  return { items, explainWith };
}
