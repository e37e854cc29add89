import type { ChildProcess } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, corpusFile, firstLine, usePods, type PodNamespace } from '../harness/pod-namespace.js';

const pod = usePods(afterEach);
const LINKERD_RULES = corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt');

/**
 * A full garbage collection every 10 ms for the whole run (`--expose-gc` and a preloaded loop):
 * a signal, a listener or a timer reachable only weakly (an AbortSignal.any composite, a promise
 * nothing holds) is collected mid-probe, and its abort or its wake-up lost.
 */
function underGcStorm(ns: PodNamespace): { nodeFlags: string[] } {
  const file = join(ns.tmp, 'gc-storm.cjs');
  writeFileSync(file, 'setInterval(() => globalThis.gc(), 10).unref();\n');
  chmodSync(file, 0o644);
  return { nodeFlags: ['--expose-gc', '--require', file] };
}

function whenLogged(child: ChildProcess, message: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(`"msg":"${message}"`)) resolve();
    });
  });
}

async function run(ns: PodNamespace, timeout: string, meanwhile: (child: ChildProcess) => void) {
  // The npm bin: a start-up snapshot refuses V8 flags it was not built with (--expose-gc).
  const child = ns.spawnInterlock(
    ['validate', '--mesh', 'linkerd', '--timeout', timeout, '--termination-log', ns.terminationLog],
    { launcher: 'modules', ...underGcStorm(ns) },
  );
  const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const running = collect(child, ns.terminationLog);
  await whenLogged(child, 'probing interception');
  meanwhile(child);
  const result = await running;
  clearTimeout(guard);
  return result;
}

describe('forced garbage collections mid-probe lose no abort, no deadline and no proof', () => {
  it('SIGTERM mid-probe still ends the run with Interrupted and the failure code', async () => {
    const ns = pod({ sink: 'drop' });
    ns.execSink('iptables-nft', '-t', 'raw', '-I', 'PREROUTING', '-j', 'DROP');
    const result = await run(ns, '20s', (child) => setTimeout(() => child.kill('SIGTERM'), 1500));
    expect(result.exitCode).toBe(95);
    expect(firstLine(result.terminationMessage)).toMatch(/^Interrupted: SIGTERM .* waiting for the IPv4 probe/);
  });

  it('an unanswered probe still fails at its own deadline', async () => {
    const ns = pod({ sink: 'drop' });
    ns.execSink('iptables-nft', '-t', 'raw', '-I', 'PREROUTING', '-j', 'DROP');
    const result = await run(ns, '4s', () => undefined);
    expect(result.exitCode).toBe(95);
    expect(firstLine(result.terminationMessage)).toMatch(/^InterceptionMissing: .* no answer/);
  });

  it('rules that land mid-probe are still proven', async () => {
    const ns = pod({ sink: 'drop' });
    const result = await run(ns, '8s', () => setTimeout(() => ns.applyRules(LINKERD_RULES, 'nft'), 1200));
    expect(result.exitCode, result.stdout).toBe(0);
    expect(firstLine(result.terminationMessage)).toMatch(/^Intercepted: /);
  });
});
