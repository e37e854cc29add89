import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, usePods, verdictLine } from '../harness/pod-namespace.js';

// Issue 43 item 2: with no capture rule and no ztunnel, a process in the pod holding only
// CAP_NET_RAW listens on ztunnel's ports, binds the probe's own address and port, connects it to
// 15001 and spoofs the SYN-ACK the probe waits for. The kernel must refuse the bind (the probe
// socket is not SO_REUSEADDR), and the validator must not exit 0 whatever the squatter managed.
// The sink drops silently, so only the spoofed SYN-ACK answers; nothing leaves the machine.
const pod = usePods(afterEach);
const children: ChildProcess[] = [];
afterEach(() => {
  while (children.length) children.pop()?.kill();
});

const SQUATTER = resolve(REPO_ROOT, 'test/harness/probe-squatter.py');

interface Outcome {
  readonly port: number;
  /** The probe held the port (SYN_SENT or connected) before and after the binds were tried. */
  readonly held: boolean;
  readonly reuseaddr: string;
  readonly reuseport: string;
  readonly wildcard: string;
}

function outcomes(file: string): { ready: boolean; binds: Outcome[] } {
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
  const parsed = lines.map((line) => JSON.parse(line) as Partial<Outcome> & { ready?: boolean });
  return { ready: parsed.some((entry) => entry.ready), binds: parsed.filter((entry) => 'port' in entry) as Outcome[] };
}

describe('the ambient forgery with CAP_NET_RAW', () => {
  it('cannot bind the probe socket and ends in ZtunnelArrivalUnseen, never exit 0', async () => {
    const ns = pod({ sink: 'drop' });
    const report = join(ns.tmp, 'squatter.jsonl');
    // uid 0 with only CAP_NET_RAW (the bounding set is what root keeps across exec).
    children.push(
      ns.spawnInPod([
        'setpriv',
        '--bounding-set=-all,+net_raw',
        '/usr/bin/python3',
        SQUATTER,
        ns.ipv4Address,
        report,
        '30',
      ]),
    );
    for (const port of [15001, 15006, 15008]) await ns.untilListening('pod', port);
    expect(outcomes(report).ready).toBe(true);

    const run = await ns.runInterlock(['--mesh', 'istio-ambient', '--timeout', '3s']);
    const { binds } = outcomes(report);
    const why = `${run.terminationMessage}\n${run.stderr}\n${JSON.stringify(binds)}`;
    expect(run.exitCode, why).toBe(126);
    expect(verdictLine(run.terminationMessage), why).toMatch(/^ZtunnelArrivalUnseen: /);
    // The squatter saw the probe's SYNs and spoofed each one's SYN-ACK, so the probe connected...
    expect(binds.length, why).toBeGreaterThan(0);
    // ZtunnelArrivalUnseen already says an attempt connected (the spoofed SYN-ACK) and was refused;
    // on a loaded machine another attempt may have timed out before its spoof, which is no matter.
    expect(run.terminationMessage, why).toMatch(/not-theirs x\d+/);
    // ...but the kernel refused every bind on the probe's port, however it was asked.
    const whileHeld = binds.filter((bind) => bind.held);
    expect(whileHeld.length, why).toBeGreaterThan(0);
    for (const bind of whileHeld)
      expect(bind, why).toMatchObject({ reuseaddr: 'EADDRINUSE', reuseport: 'EADDRINUSE', wildcard: 'EADDRINUSE' });
  });
});
