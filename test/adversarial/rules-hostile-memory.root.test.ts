import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryCgroup, type MemoryCgroup } from '../harness/memory-cgroup.js';
import { MAX_LIVE_DUMP_BYTES } from '../../src/rules/limits.js';
import { corpusFile, usePods, verdictLine } from '../harness/pod-namespace.js';

// Issue #43, item 5: a tenant with NET_ADMIN writes 20,000 scattered RETURNs into Linkerd's own
// nat table (the corpus case, written by the real iptables-nft-restore). The validator runs as its
// pod runs it: uid 65534 with NET_ADMIN and NET_RAW, `--rules required`, inside a memory cgroup of
// the 128 MiB limit `manifest --rules-check` prints, its children and page cache charged there.
// Before, `nft -j` was OOM-killed, then the validator: exit 137, no termination message.
const pod = usePods(afterEach);
const LIMIT_MIB = 128;
const LINKERD = readFileSync(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'utf8');
let cgroup: MemoryCgroup | undefined;
afterEach(() => {
  cgroup?.remove();
  cgroup = undefined;
});

/** The corpus table with `count` RETURNs of scattered destinations and ports before its first rule. */
function withScatteredReturns(count: number): string {
  const rules = Array.from(
    { length: count },
    (_, i) =>
      `-A PROXY_INIT_OUTPUT -s 10.${(i >> 8) & 255}.${i & 255}.${(i * 7) & 255}/32 -d 10.${(i * 37) & 255}.${(i * 11) & 255}.0/24 -m owner --uid-owner 2102 -j RETURN`,
  );
  const mutated = LINKERD.replace(/^(-A PROXY_INIT_OUTPUT )/m, `${rules.join('\n')}\n$1`);
  expect(mutated).not.toBe(LINKERD);
  return mutated;
}

describe(`a hostile nat table inside a ${LIMIT_MIB} MiB memory cgroup (uid 65534, NET_ADMIN, --rules required)`, () => {
  it('ends with RulesTooLarge naming the table and its size, the termination message written, under the limit', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(withScatteredReturns(20_000), 'nft');
    cgroup = memoryCgroup(`interlock-hostile-rules-${process.pid}`, LIMIT_MIB * 1024 * 1024);
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--rules', 'required', '--timeout', '5s'], {
      caps: true,
      cgroup,
    });
    const peak = cgroup.peakBytes();
    console.log(
      `hostile rules: cgroup v${cgroup.version} peak ${(peak / 1048576).toFixed(1)} MiB of ${LIMIT_MIB}, exit ${String(run.exitCode)}, oom kills ${cgroup.oomKills()}: ${verdictLine(run.terminationMessage)}`,
    );
    expect(run.exitCode, run.stderr).toBe(95);
    expect(cgroup.oomKills()).toBe(0);
    expect(peak).toBeLessThan(LIMIT_MIB * 1024 * 1024);
    expect(verdictLine(run.terminationMessage)).toMatch(/^RulesTooLarge: .*\bnat\b.*table.*\d+(?:\.\d+)? (?:MiB|KiB)/);
  }, 60_000);

  it('a table just under the cap, analysed until its deadline, stays inside the limit with a verdict', async () => {
    const ns = pod({ sink: 'reject' });
    // Legacy as root: nft lists nothing of it, so the whole 1 MiB goes through the analysis.
    const table = withScatteredReturns(9_000);
    expect(Buffer.byteLength(table)).toBeLessThan(MAX_LIVE_DUMP_BYTES);
    ns.applyRulesText(table, 'legacy');
    cgroup = memoryCgroup(`interlock-hostile-rules-${process.pid}`, LIMIT_MIB * 1024 * 1024);
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--rules', 'required', '--timeout', '5s'], {
      uid: 0,
      caps: true,
      cgroup,
    });
    const peak = cgroup.peakBytes();
    console.log(
      `hostile rules under the cap: cgroup v${cgroup.version} peak ${(peak / 1048576).toFixed(1)} MiB of ${LIMIT_MIB}, exit ${String(run.exitCode)}: ${verdictLine(run.terminationMessage).slice(0, 200)}`,
    );
    expect(run.exitCode, run.stderr).toBe(95);
    expect(cgroup.oomKills()).toBe(0);
    expect(peak).toBeLessThan(LIMIT_MIB * 1024 * 1024);
    expect(verdictLine(run.terminationMessage)).toMatch(/^Rules(?:UnknownMatch|Mismatch): /);
  }, 60_000);
});
