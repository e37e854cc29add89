import { afterEach, describe, expect, it } from 'vitest';
import { verdictLine, usePods } from '../harness/pod-namespace.js';

// Probe targets that reach the validator's own listener without any rule: each must be refused as
// a configuration error (exit 64), never probed, because a pass through them proves nothing.
const pod = usePods(afterEach);

const CONFIG_ERROR = /^(ConfigInvalid|ProbeUnroutable|ProbeIdentityExcluded): /;

describe('targets the listener can be reached at without the rules (no rules in the pod)', () => {
  const outbound: Array<[string, string[]]> = [
    ['--probe-address 0.0.0.0 on the listener port', ['--probe-address', '0.0.0.0', '--probe-port', '4140']],
    ['--probe-address 0.0.0.0', ['--probe-address', '0.0.0.0']],
    ['--probe-address 127.0.0.1 on the listener port', ['--probe-address', '127.0.0.1', '--probe-port', '4140']],
    ['--probe-address 127.3.4.5', ['--probe-address', '127.3.4.5']],
    ['a probe port equal to the listener port', ['--probe-port', '4140']],
  ];
  for (const [name, args] of outbound) {
    it(`${name}: exit 64`, async () => {
      const ns = pod({ sink: 'reject' });
      const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '3s', ...args]);
      expect(run.exitCode, run.terminationMessage).toBe(64);
      expect(verdictLine(run.terminationMessage)).toMatch(CONFIG_ERROR);
    });
  }

  it("the pod's own IP on the listener port: exit 64", async () => {
    const ns = pod({ sink: 'reject' });
    const run = await ns.runInterlock([
      '--mesh',
      'linkerd',
      '--timeout',
      '3s',
      '--probe-address',
      ns.ipv4Address,
      '--probe-port',
      '4140',
    ]);
    expect(run.exitCode, run.terminationMessage).toBe(64);
    expect(verdictLine(run.terminationMessage)).toMatch(CONFIG_ERROR);
  });

  for (const [name, args] of [
    ['--probe-address ::', ['--probe-address', '::', '--probe-port', '4140']],
    ['--probe-address ::1', ['--probe-address', '::1', '--probe-port', '4140']],
    ['--probe-address ::ffff:127.0.0.1', ['--probe-address', '::ffff:127.0.0.1', '--probe-port', '4140']],
  ] as const) {
    it(`dual-stack, ${name} on the listener port: exit 64`, async () => {
      const ns = pod({ sink: 'reject', ipv6: true });
      const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '3s', ...args]);
      expect(run.exitCode, run.terminationMessage).toBe(64);
      expect(verdictLine(run.terminationMessage)).toMatch(CONFIG_ERROR);
    });
  }

  it('as the proxy uid 1337, --probe-port 15006 (the listener port): exit 64', async () => {
    const ns = pod({ sink: 'reject' });
    const run = await ns.runInterlock(['--mesh', 'istio', '--timeout', '3s', '--probe-port', '15006'], { uid: 1337 });
    expect(run.exitCode, run.terminationMessage).toBe(64);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^ConfigInvalid: --probe-port 15006 is the port the validator itself listens on/,
    );
  });

  it('as the proxy uid 1337, --inbound-port 20001: no target on the listener port, so no rules means no pass', async () => {
    const ns = pod({ sink: 'reject' });
    const run = await ns.runInterlock(['--mesh', 'istio', '--timeout', '3s', '--inbound-port', '20001'], { uid: 1337 });
    // The plan steps around the listener port (20001 would reach it directly); what it probes
    // instead needs the rules, which this pod lacks.
    expect(run.exitCode, run.terminationMessage).toBe(126);
    expect(verdictLine(run.terminationMessage)).toMatch(
      /^InterceptionMissing: IPv4 connection to 10\.\d+\.\d+\.2:20002 was not redirected to port 20001/,
    );
    const targets = run.logs.find((line) => line.msg === 'probing interception')?.targets as Array<{
      destination: string;
    }>;
    // Exclusions unknown (no --exclude-outbound-ports): one port, the first the plan may use.
    expect(targets.length).toBe(1);
    expect(targets.map((target) => target.destination)).not.toContainEqual(expect.stringMatching(/:20001$/));
  });
});
