import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { untilLogged } from '../harness/logged.js';
import { collect, corpusFile, verdictLine, usePods, type PodNamespace } from '../harness/pod-namespace.js';
import { LIBFAKETIME } from '../harness/starvation.js';

const pod = usePods(afterEach);
const LINKERD_RULES = corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt');

/**
 * libfaketime stepping only the wall clock of the validator (CLOCK_REALTIME), as NTP's first
 * sync does on a booting node; the monotonic clock runs on. Write `+3600` to step it mid-run.
 */
function steppedClock(ns: PodNamespace): { prefix: string[]; step: (offset: string) => void } {
  const file = join(ns.tmp, 'faketime');
  writeFileSync(file, '+0\n');
  chmodSync(file, 0o666);
  return {
    // Given to node alone: preloaded into `ip` (root) too, libfaketime makes a shared-memory
    // semaphore that the validator (uid 65534) may not open, and stops.
    prefix: [
      'env',
      `LD_PRELOAD=${LIBFAKETIME}`,
      'FAKETIME_DONT_FAKE_MONOTONIC=1',
      'FAKETIME_NO_CACHE=1',
      `FAKETIME_TIMESTAMP_FILE=${file}`,
    ],
    step: (offset) => writeFileSync(file, `${offset}\n`),
  };
}

async function runStepped(ns: PodNamespace, offset: string, meanwhile: () => void) {
  const clock = steppedClock(ns);
  const child = ns.spawnInterlock(
    ['validate', '--mesh', 'linkerd', '--timeout', '6s', '--termination-log', ns.terminationLog],
    { prefix: clock.prefix },
  );
  const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    const running = collect(child, ns.terminationLog);
    await untilLogged(child, 'probing interception', running);
    clock.step(offset);
    meanwhile();
    return await running;
  } finally {
    clearTimeout(guard);
  }
}

describe('the wall clock stepped by an hour mid-run changes neither the verdict nor its time', () => {
  it('+1 h while the rules land late (the CNI race of a boot): still passes once they land', async () => {
    const ns = pod({ sink: 'drop' });
    const run = await runStepped(ns, '+3600', () => {
      setTimeout(() => ns.applyRules(LINKERD_RULES, 'nft'), 1500);
    });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(verdictLine(run.terminationMessage)).toMatch(/^Intercepted: /);
    // The log's timestamps are for people: they show the stepped wall clock, an hour on.
    const started = run.logs.find((line) => line.msg === 'interlock validate starting');
    const ended = run.logs.find((line) => 'verdict' in line);
    const hours = (Date.parse(String(ended?.time)) - Date.parse(String(started?.time))) / 3_600_000;
    expect(hours).toBeGreaterThan(0.9);
  });

  it('-1 h on an unmeshed pod whose probes go unanswered: fails at its deadline, not an hour later', async () => {
    const ns = pod({ sink: 'drop' });
    // Silence, not an ICMP error: only the deadline can end this probe.
    ns.execSink('iptables-nft', '-t', 'raw', '-I', 'PREROUTING', '-j', 'DROP');
    const run = await runStepped(ns, '-3600', () => undefined);
    expect(run.exitCode).toBe(95);
    // The run's own verdict at its deadline (killed at 30 s otherwise), not the watchdog's.
    expect(verdictLine(run.terminationMessage)).toMatch(/^InterceptionMissing: .* no answer/);
  });
});
