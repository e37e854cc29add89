import { afterEach, describe, expect, it } from 'vitest';
import { verdictLine, usePods } from '../harness/pod-namespace.js';

// A nat table the analysis cannot finish: 10,000 RETURNs of scattered sources into scattered /24s
// (correct for Linkerd: each is for the proxy's own uid), under the 1 MiB a pod's rules may take
// (more is refused unread: rules-hostile-memory.root.test.ts). Before, the synchronous analysis held
// the watchdog's timers past --timeout (a 10s run answered after 56 s); its CPU and memory are
// measured by hand and in the CHANGELOG, never asserted here.
const pod = usePods(afterEach);

function hostileTable(count: number): string {
  const lines = [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':PROXY_INIT_OUTPUT - [0:0]',
    ':PROXY_INIT_REDIRECT - [0:0]',
    '-A PREROUTING -j PROXY_INIT_REDIRECT',
    '-A OUTPUT -j PROXY_INIT_OUTPUT',
  ];
  for (let i = 0; i < count; i++) {
    const v = i * 2;
    lines.push(
      `-A PROXY_INIT_OUTPUT -s 10.${(v >> 16) & 255}.${(v >> 8) & 255}.${v & 255}/32 -d 10.${(i * 37) & 255}.${(i * 11) & 255}.0/24 -m owner --uid-owner 2102 -j RETURN`,
    );
  }
  lines.push(
    '-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102 -j RETURN',
    '-A PROXY_INIT_OUTPUT -o lo -j RETURN',
    '-A PROXY_INIT_OUTPUT -p tcp -j REDIRECT --to-ports 4140',
    '-A PROXY_INIT_REDIRECT -p tcp -m multiport --dports 4190,4191 -j RETURN',
    '-A PROXY_INIT_REDIRECT -p tcp -j REDIRECT --to-ports 4143',
    'COMMIT',
    '',
  );
  return lines.join('\n');
}

describe('a hostile ruleset is bounded by the deadline (uid 0, NET_ADMIN, --rules required)', () => {
  it('the analysis stops at the deadline: RulesUnknownMatch naming it, with the failure code', async () => {
    const ns = pod({ sink: 'reject' });
    ns.applyRulesText(hostileTable(10_000), 'legacy');
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--rules', 'required', '--timeout', '3s'], {
      uid: 0,
      caps: true,
    });
    expect(run.exitCode, run.terminationMessage).toBe(95);
    expect(verdictLine(run.terminationMessage)).toMatch(/^RulesUnknownMatch: .*the analysis reached its deadline/);
    // The verdict, not the watchdog: the analysis returned in time for the run to finish normally.
    expect(run.terminationMessage).not.toMatch(/^ValidationTimeout/);
  }, 60_000);
});
