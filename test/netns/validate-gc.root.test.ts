import type { ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { untilLogged } from '../harness/logged.js';
import { collect, corpusFile, verdictLine, usePods, type PodNamespace } from '../harness/pod-namespace.js';

const pod = usePods(afterEach);
const LINKERD_RULES = corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt');
/** A validator still running this long after its start is hung: killed, so the test ends. */
const GUARD_MS = 30_000;
/** The guard, the namespace set-up and the kill's aftermath: the guard always ends a run first. */
const TEST_TIMEOUT_MS = GUARD_MS + 15_000;

/**
 * Full garbage collections for the whole run (`--expose-gc` and a preloaded loop): a signal, a
 * listener or a timer reachable only weakly (an AbortSignal.any composite, a promise nothing
 * holds) is collected mid-probe, and its abort or its wake-up lost. One every 10 ms, or twice as
 * long as the last one took: under load a full collection takes longer than 10 ms, and a fixed
 * interval would then leave the validator nothing but collections. Each one is counted in a file,
 * so the test can tell that collections did happen while the probe ran.
 */
function underGcStorm(ns: PodNamespace): { nodeFlags: string[]; collections: () => number } {
  const file = join(ns.tmp, 'gc-storm.cjs');
  const counter = join(ns.tmp, 'gc-count');
  writeFileSync(
    file,
    `const { writeFileSync } = require('node:fs');
let count = 0;
function collect() {
  const started = performance.now();
  globalThis.gc();
  writeFileSync(${JSON.stringify(counter)}, String(++count));
  setTimeout(collect, Math.max(10, 2 * (performance.now() - started))).unref();
}
setTimeout(collect, 10).unref();
`,
  );
  chmodSync(file, 0o644);
  const collections = (): number => {
    try {
      return Number(readFileSync(counter, 'utf8'));
    } catch {
      return 0;
    }
  };
  return { nodeFlags: ['--expose-gc', '--require', file], collections };
}

async function run(ns: PodNamespace, timeout: string, meanwhile: (child: ChildProcess) => void) {
  const storm = underGcStorm(ns);
  // The npm bin: a start-up snapshot refuses V8 flags it was not built with (--expose-gc).
  const child = ns.spawnInterlock(
    ['validate', '--mesh', 'linkerd', '--timeout', timeout, '--termination-log', ns.terminationLog],
    { launcher: 'modules', nodeFlags: storm.nodeFlags },
  );
  const guard = setTimeout(() => child.kill('SIGKILL'), GUARD_MS);
  try {
    const running = collect(child, ns.terminationLog);
    await untilLogged(child, 'probing interception', running);
    const before = storm.collections();
    meanwhile(child);
    const result = await running;
    // The premise: the storm ran, and collected while the probe was under way.
    expect(storm.collections(), 'full collections after the probe began').toBeGreaterThan(before);
    return result;
  } finally {
    clearTimeout(guard);
  }
}

describe('forced garbage collections mid-probe lose no abort, no deadline and no proof', () => {
  it(
    'SIGTERM mid-probe still ends the run with Interrupted and the failure code',
    async () => {
      const ns = pod({ sink: 'drop' });
      ns.execSink('iptables-nft', '-t', 'raw', '-I', 'PREROUTING', '-j', 'DROP');
      const result = await run(ns, '20s', (child) => setTimeout(() => child.kill('SIGTERM'), 1500));
      expect(result.exitCode, result.stdout).toBe(95);
      expect(verdictLine(result.terminationMessage)).toMatch(/^Interrupted: SIGTERM .* waiting for the IPv4 probe/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an unanswered probe still fails at its own deadline',
    async () => {
      const ns = pod({ sink: 'drop' });
      ns.execSink('iptables-nft', '-t', 'raw', '-I', 'PREROUTING', '-j', 'DROP');
      // Silence, not an ICMP error: only the probe's deadline can end it. 8 s, not less: a
      // collection storm under load can take seconds to reach the probe, and the run must.
      const result = await run(ns, '8s', () => undefined);
      expect(result.exitCode, result.stdout).toBe(95);
      // The probe's own verdict at the deadline: a lost deadline timer leaves the watchdog's
      // ValidationTimeout instead, naming the probe still pending.
      expect(verdictLine(result.terminationMessage), result.stdout).toMatch(/^InterceptionMissing: .* no answer/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'rules that land mid-probe are still proven',
    async () => {
      const ns = pod({ sink: 'drop' });
      const result = await run(ns, '8s', () => setTimeout(() => ns.applyRules(LINKERD_RULES, 'nft'), 1200));
      expect(result.exitCode, result.stdout).toBe(0);
      expect(verdictLine(result.terminationMessage)).toMatch(/^Intercepted: /);
    },
    TEST_TIMEOUT_MS,
  );
});
