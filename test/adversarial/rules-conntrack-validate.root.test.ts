import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { corpusFile, verdictLine, usePods } from '../harness/pod-namespace.js';

/**
 * `validate --rules required` in a pod namespace whose real rules are Linkerd's plus a NOTRACK in
 * raw: the probe (to a documentation address) still passes, so only the rules check can see that
 * every connection to the service range skips the proxy.
 */
const pod = usePods(afterEach);
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/conntrack');

type Check = { name: string; status: string; reason?: string; message: string };
const rulesCheckOf = (summary: Record<string, unknown> | undefined): Check | undefined =>
  ((summary?.checks as Check[] | undefined) ?? []).find((check) => check.name === 'rules');

describe('validate --rules required sees a NOTRACK in front of correct rules', () => {
  for (const backend of ['nft', 'legacy'] as const) {
    it(`raw OUTPUT -j CT --notrack for 10.96.0.0/12 (iptables-${backend}): RulesMismatch naming the region and rule`, async () => {
      const ns = pod();
      ns.applyRulesText(
        readFileSync(path.join(FIXTURES, `linkerd-notrack-output/iptables-${backend}-save.v4.txt`), 'utf8'),
        backend,
      );
      const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s', '--rules', 'required'], {
        uid: 0,
        caps: true,
      });
      expect(run.exitCode, run.stdout).toBe(95);
      expect(verdictLine(run.terminationMessage)).toMatch(
        /^RulesMismatch: outbound TCP to 10\.96\.0\.0\/12, any port, from any uid but 2102.* is not redirected.*-j CT --notrack/,
      );
      expect(rulesCheckOf(run.summary)?.status).toBe('failed');
    });
  }

  it('the same rules without the NOTRACK pass (the baseline the attack changes)', async () => {
    const ns = pod();
    ns.applyRules(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'nft');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '5s', '--rules', 'required'], {
      uid: 0,
      caps: true,
    });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(rulesCheckOf(run.summary)?.status).toBe('passed');
  });
});
