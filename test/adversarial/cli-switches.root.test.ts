import { afterEach, describe, expect, it } from 'vitest';
import { collect, corpusFile, usePods, verdictLine } from '../harness/pod-namespace.js';
import { runCommand } from './cli-run.js';

const pod = usePods(afterEach);
const LINKERD = ['--mesh', 'linkerd', '--timeout', '3s'];

// Issue 7, item 1: a switch read from the pod's environment, or given a value, must never turn a
// validation into "print and exit 0".
describe('switches are argv-only and take no value (validate in a pod without mesh rules, uid 65534)', () => {
  const envs: Record<string, string>[] = [
    { INTERLOCK_VERSION: '0.1.0' },
    { INTERLOCK_HELP: 'false' },
    { INTERLOCK_HELP: '1' },
  ];
  for (const env of envs) {
    it(`${Object.keys(env)[0]}=${Object.values(env)[0]} in the environment is ignored: the run validates and fails`, async () => {
      const ns = pod();
      const run = await ns.runInterlock(LINKERD, { env });
      expect(run.exitCode, run.stdout + run.stderr).toBe(95);
      expect(run.terminationMessage).toMatch(/^InterceptionMissing: /);
    });
  }

  for (const flag of ['--help=false', '--version=0', '--help=true', '--tproxy=false']) {
    it(`${flag} is a configuration error (exit 64), never a print-and-pass`, async () => {
      const ns = pod();
      const run = await ns.runInterlock([...LINKERD, flag]);
      expect(run.exitCode, run.stdout + run.stderr).toBe(64);
      expect(verdictLine(run.terminationMessage)).toMatch(/^ConfigInvalid: .*--(help|version|tproxy)/);
    });
  }
});

// Issue 43, item 7: the image's entrypoint is `interlock validate`, so a container whose args are
// ["--help"] runs exactly `interlock validate --help`. No TTY check tells a person from such a pod
// (a pod may ask for `tty: true`), so a lone switch prints what was asked and still exits 64.
describe('a lone --help, -h or --version to validate in a pod: printed, never exit 0', () => {
  for (const [flag, printed] of [
    ['--help', /^Usage: interlock validate/],
    ['-h', /^Usage: interlock validate/],
    ['--version', /^interlock \d+\.\d+\.\d+\ncommit: /],
  ] as const) {
    it(`args ["${flag}"]: exit 64, ConfigInvalid in the termination message`, async () => {
      const ns = pod();
      // Exactly the pod's argv: the termination log's path comes from the environment.
      const child = ns.spawnInterlock(['validate', flag], { env: { INTERLOCK_TERMINATION_LOG: ns.terminationLog } });
      const run = await collect(child, ns.terminationLog);
      expect(run.exitCode, run.stdout + run.stderr).toBe(64);
      expect(run.stdout).toMatch(printed);
      expect(verdictLine(run.terminationMessage)).toMatch(
        new RegExp(`^ConfigInvalid: validate ${flag} prints the (usage|version) and exits without a verdict`),
      );
      expect(run.stderr).toContain("'interlock help validate'");
    });
  }
});

describe('explain: the environment never prints help instead of judging a dump', () => {
  it('INTERLOCK_HELP on a broken dump still fails on the dump', async () => {
    const broken = corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt');
    const run = await runCommand(['explain', '--mesh', 'linkerd', '--nft-ruleset', broken], {
      env: { INTERLOCK_HELP: 'true' },
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(65);
  });

  it('--help=false is a configuration error', async () => {
    const run = await runCommand(['explain', '--help=false']);
    expect(run.exitCode, run.stdout + run.stderr).toBe(64);
  });
});
