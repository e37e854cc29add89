import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface MeshRules {
  /** Corpus case (or a description of how it was derived from one). */
  readonly name: string;
  readonly family: 'ipv4' | 'ipv6';
  /** Which iptables backend the mesh CNI writes with. */
  readonly backend: 'nft' | 'legacy';
  /** iptables-restore input. */
  readonly text: string;
}

/** The repository this module belongs to, found upwards (the bench runs a compiled copy of it). */
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 10; depth += 1) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'e2e'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error(`no repository root above ${fileURLToPath(import.meta.url)}`);
}

/** The corpus of real mesh rulesets the repository carries (test/fixtures/corpus). */
function corpusDir(): string {
  const dir = path.resolve(repoRoot(), 'test/fixtures/corpus');
  if (!existsSync(path.join(dir, 'manifest.json'))) throw new Error(`mesh rules corpus not found in ${dir}`);
  return dir;
}

/**
 * The IPv4 ruleset of a corpus case as restore input. Istio cases ship `restore.v4`; the Linkerd
 * cases only have what iptables-nft-save printed, which iptables-restore reads back as is.
 */
export function corpusRules(caseDir: string, backend: MeshRules['backend'] = 'nft'): MeshRules {
  const dir = path.join(corpusDir(), caseDir);
  const file = ['restore.v4', 'iptables-nft-save.v4.txt'].map((f) => path.join(dir, f)).find((f) => existsSync(f));
  if (!file) throw new Error(`no IPv4 restore input in ${dir}`);
  const text = readFileSync(file, 'utf8');
  if (!/^\*nat$/m.test(text) || !/^COMMIT$/m.test(text)) throw new Error(`${file} is not iptables-restore input`);
  return { name: caseDir, family: 'ipv4', backend, text };
}

/** A ruleset with one rule changed the way a misconfigured mesh would change it. */
export function withReplacedRule(rules: MeshRules, from: string, to: string): MeshRules {
  const count = rules.text.split(from).length - 1;
  if (count !== 1) throw new Error(`expected exactly one "${from}" in ${rules.name}, found ${count}`);
  return { ...rules, name: `${rules.name} with "${from}" -> "${to}"`, text: rules.text.replace(from, to) };
}
