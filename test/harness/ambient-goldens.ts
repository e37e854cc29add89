import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Istio ambient's in-pod rules from istio-cni's own goldens
 * (test/fixtures/meshes/istio-ambient/<tag>/{iptables,nftables}/<name>.golden), as the namespace
 * and CRI scenarios write them. Nothing is typed from memory: the rules are the goldens' lines,
 * optionally with some rule lines left out (a partial enrolment).
 */
const REPO_ROOT = resolve(import.meta.dirname, '../..');
const AMBIENT_FIXTURES = resolve(REPO_ROOT, 'test/fixtures/meshes/istio-ambient');
export const ZTUNNEL_STANDIN = resolve(REPO_ROOT, 'test/harness/ztunnel-standin.py');

/** Every pinned tag, oldest first; the default branch (HEAD-<commit>) last. */
export const AMBIENT_TAGS: readonly string[] = readdirSync(AMBIENT_FIXTURES)
  .filter((name) => /^\d|^HEAD-/.test(name))
  .sort((a, b) => (a.startsWith('HEAD') ? 1 : b.startsWith('HEAD') ? -1 : a.localeCompare(b, 'en', { numeric: true })));
export const HEAD_TAG = AMBIENT_TAGS.at(-1) ?? 'HEAD';

export function ambientGolden(tag: string, dir: 'iptables' | 'nftables', name: string): string {
  return readFileSync(join(AMBIENT_FIXTURES, tag, dir, `${name}.golden`), 'utf8');
}

/**
 * A restore-text golden (1.23.0 on) as one iptables-restore text per family: the harness lines
 * (`iptables-save`) dropped, the first run of tables IPv4, a table named again starts IPv6.
 */
export function restoreTexts(golden: string): { ipv4: string; ipv6: string } {
  const out = { ipv4: [] as string[], ipv6: [] as string[] };
  const seen = new Set<string>();
  let family: 'ipv4' | 'ipv6' = 'ipv4';
  for (const line of golden.split('\n')) {
    if (/^ip6?tables-save$/.test(line) || line.trim() === '') continue;
    const table = /^\* (\w+)/.exec(line)?.[1];
    if (table) {
      if (seen.has(table)) family = 'ipv6';
      seen.add(table);
    }
    out[family].push(line);
  }
  const text = (lines: string[]): string => (lines.length > 0 ? `${lines.join('\n')}\n` : '');
  return { ipv4: text(out.ipv4), ipv6: text(out.ipv6) };
}

const isRule = (line: string): boolean => /^-A |^add rule |^ip6?tables .* -A /.test(line);

export function keepRules(text: string, keep: (rule: string) => boolean): string {
  return text
    .split('\n')
    .filter((line) => !isRule(line) || keep(line))
    .join('\n');
}

/**
 * The host-probe addresses a golden accepts (outbound TCP to them is ACCEPTed): the goldens' IPv6
 * one is upstream's test value, not istio-cni's default, so a check of those rules is told it.
 */
export function goldenHostProbes(golden: string): string[] {
  const found = [
    ...golden.matchAll(/^-A ISTIO_OUTPUT -d (\S+?)(?:\/\d+)? -p tcp -m tcp -j ACCEPT$/gm),
    ...golden.matchAll(
      /^add rule inet istio-ambient-nat istio-output meta l4proto tcp ip6? daddr (\S+) counter accept$/gm,
    ),
  ].map((match) => match[1] ?? '');
  return [...new Set(found)];
}
