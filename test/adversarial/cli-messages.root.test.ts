import { afterEach, describe, expect, it } from 'vitest';
import { usePods, verdictLine } from '../harness/pod-namespace.js';
import { runCommand } from './cli-run.js';

const pod = usePods(afterEach);
const HUGE = `\u202e${'9'.repeat(131_000)}`;

// Issue 7, item 12: echoed values are truncated and escaped; an empty enum value is an error.
describe('messages never echo raw or huge values', () => {
  it('validate: a 131 KB value with U+202E is truncated and escaped in stderr and the termination message', async () => {
    const ns = pod();
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '3s', '--inbound-port', HUGE]);
    expect(run.exitCode).toBe(64);
    for (const text of [run.stderr, run.terminationMessage]) {
      expect(text.length).toBeLessThan(1000);
      expect(text).not.toContain('\u202e');
      expect(text).toContain('\\u{202e}');
    }
  });

  it('validate: the same through an INTERLOCK_* variable', async () => {
    const ns = pod();
    const run = await ns.runInterlock(['--mesh', 'linkerd', '--timeout', '3s'], {
      env: { INTERLOCK_PROBE_ADDRESS: `\u0007${HUGE}` },
    });
    expect(run.exitCode).toBe(64);
    expect(run.terminationMessage.length).toBeLessThan(1000);
    expect(run.terminationMessage).not.toContain('\u0007');
    expect(run.terminationMessage).not.toContain('\u202e');
  });

  it('explain: an unknown flag with a huge name is truncated and escaped', async () => {
    const run = await runCommand(['explain', `--x${HUGE}=1`]);
    expect(run.exitCode).toBe(64);
    expect(run.stderr.length).toBeLessThan(1000);
    expect(run.stderr).not.toContain('\u202e');
  });

  it("validate --mesh '' is an error, not silently generic", async () => {
    const ns = pod();
    const run = await ns.runInterlock([
      '--mesh',
      '',
      '--inbound-port',
      '4143',
      '--outbound-port',
      '4140',
      '--timeout',
      '3s',
    ]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(64);
    expect(verdictLine(run.terminationMessage)).toMatch(/^ConfigInvalid: --mesh/);
  });

  it("INTERLOCK_MESH='' is an error too", async () => {
    const ns = pod();
    const run = await ns.runInterlock(['--inbound-port', '4143', '--outbound-port', '4140', '--timeout', '3s'], {
      env: { INTERLOCK_MESH: '' },
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(64);
  });
});
