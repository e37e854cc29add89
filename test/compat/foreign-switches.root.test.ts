import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runInject } from '../../src/cli/commands/inject/run.js';
import { compatToValidate } from '../../src/compat/compat-argv.js';
import { podPatch } from '../../src/webhook/validator-patch.js';
import { collect, verdictLine, usePods } from '../harness/pod-namespace.js';
import { istioValidationArgs, meshValidatorCases } from '../meshes/mesh-fixtures.js';

/**
 * The switches the meshes' own argv parsers answer without validating, each with exit 0:
 * - linkerd/linkerd2-proxy-init validator/src/main.rs (validator/v0.1.x to main, commit
 *   049cdc21c55c): `#[derive(Parser)] #[clap(version)]`, so clap adds -h/--help and -V/--version.
 * - istio/istio tools/istio-iptables/pkg/cmd/root.go: a cobra command, which adds -h/--help; it
 *   sets no Version, so cobra adds no --version (an unknown flag, which cobra refuses).
 */
const LINKERD_SWITCHES = ['-h', '--help', '-V', '--version', '--help=false', '-V=true'];
const ISTIO_SWITCHES = ['-h', '--help', '-h=true', '--help=1', '-ht'];

const linkerdCases = meshValidatorCases().filter((c) => c.mesh === 'linkerd');
const istioCases = meshValidatorCases().filter((c) => c.mesh === 'istio' && !c.fromIstioInit);

describe('help and version are not verdicts: src/compat refuses the foreign switches', () => {
  it('every Linkerd validator argv of every release, with -h/--help/-V/--version anywhere, is refused', () => {
    expect(linkerdCases.length).toBeGreaterThan(3);
    for (const testCase of linkerdCases)
      for (const flag of LINKERD_SWITCHES)
        for (const argv of [
          [...testCase.argv, flag],
          [testCase.argv[0] ?? '', flag, ...testCase.argv.slice(1)],
        ]) {
          const mapped = compatToValidate(argv, testCase.env);
          expect(mapped?.ok, `${testCase.id} ${argv.join(' ')}`).toBe(false);
          if (mapped && !mapped.ok) expect(mapped.error.message).toMatch(/not a verdict/);
        }
  });

  it("every istio-validation argv of every release, with cobra's -h/--help, is refused", () => {
    expect(istioCases.length).toBeGreaterThan(3);
    for (const testCase of istioCases)
      for (const flag of ISTIO_SWITCHES) {
        const mapped = compatToValidate([...testCase.argv, flag], testCase.env);
        expect(mapped?.ok, `${testCase.id} ${flag}`).toBe(false);
        if (mapped && !mapped.ok) expect(mapped.error.message).toMatch(/not a verdict/);
      }
  });

  it('cobra reads --help=false as no help: that argv still maps onto a validation', () => {
    const mapped = compatToValidate([...istioValidationArgs(), '--help=false'], {});
    expect(mapped?.ok).toBe(true);
    expect(mapped?.ok && mapped.value).not.toContain('--help');
  });

  it('istio-iptables has no --version or -V: refused as unknown options', () => {
    for (const flag of ['--version', '-V']) {
      const mapped = compatToValidate([...istioValidationArgs(), flag], {});
      expect(mapped?.ok).toBe(false);
    }
  });
});

const MESHES = join(import.meta.dirname, '../fixtures/meshes');
const ISTIO_INIT = readFileSync(join(MESHES, 'istio/HEAD-86c9f01fd735/traffic-annotations.yaml.injected'), 'utf8');
const LINKERD_CNI = readFileSync(
  join(MESHES, 'linkerd/edge-26.8.3/inject_emojivoto_deployment_no_init_container.golden.yml'),
  'utf8',
);

describe('inject refuses a mesh argv that asks for help or a version', () => {
  it('istio-init whose args end in -h (it writes no rules): refused, not a validator with --help', async () => {
    const text = ISTIO_INIT;
    // pflag reads -h anywhere after the subcommand; right after it is as good as last.
    const withHelp = text.replace(/(\n(\s*)- istio-iptables\n)/, '$1$2- -h\n');
    expect(withHelp).not.toBe(text);
    const out = await runInject(['-'], {}, () => Buffer.from(withHelp));
    expect(out.exitCode, out.stdout).toBe(64);
    expect(out.stderr).toMatch(/-h.*not a verdict/);
    expect(out.stdout).toBe('');
  });

  it("Linkerd's validator with -V: refused", async () => {
    const withVersion = LINKERD_CNI.replace(/(\n(\s*)- --timeout\n)/, '\n$2- -V$1');
    expect(withVersion).not.toBe(LINKERD_CNI);
    const out = await runInject(['-'], {}, () => Buffer.from(withVersion));
    expect(out.exitCode, out.stdout).toBe(64);
    expect(out.stderr).toMatch(/-V.*not a verdict/);
  });
});

describe('the webhook says so when a validator it replaces will refuse its argv', () => {
  it('a linkerd-network-validator with -V is patched (Interlock then refuses it) and warned about', () => {
    const pod = {
      metadata: { name: 'p' },
      spec: {
        initContainers: [
          {
            name: 'linkerd-network-validator',
            image: 'x',
            command: ['/usr/lib/linkerd/linkerd2-network-validator'],
            args: ['--timeout', '10s', '-V'],
          },
        ],
        containers: [{ name: 'a', image: 'b' }],
      },
    };
    const patch = podPatch(pod, { image: 'interlock:1', annotations: {} });
    expect(patch.containers[0]?.outcome).toBe('patched');
    expect(patch.warnings.join('\n')).toMatch(/linkerd-network-validator.*-V.*not a verdict/);
  });
});

const pod = usePods(afterEach);
const LINKERD_ARGV = ['linkerd2-network-validator', '--connect-addr', '1.1.1.1:20001', '--timeout', '5s'];

describe('the drop-in commands in a pod namespace: help is printed, no probe, no exit 0', () => {
  for (const [argv, wantsHelp] of [
    [[...LINKERD_ARGV, '--help'], true],
    [['linkerd2-network-validator', '-h'], true],
    [[...LINKERD_ARGV, '-V'], false],
    [['validate', ...istioValidationArgs(), '-h'], true],
    [['validate', '--mesh', 'linkerd', '--help'], true],
    [['validate', '--timeout', '5s', '--version'], false],
  ] as const) {
    it(`interlock ${argv.join(' ')}`, async () => {
      const ns = pod({ sink: 'reject' });
      const result = await collect(
        ns.spawnInterlock(argv, { uid: 65534, env: { INTERLOCK_TERMINATION_LOG: ns.terminationLog } }),
        ns.terminationLog,
      );
      expect(result.exitCode, result.stdout + result.stderr).toBe(64);
      expect(verdictLine(result.terminationMessage)).toMatch(/^ConfigInvalid: .*not a verdict/);
      expect(result.stdout).not.toMatch(/interlock validate starting/);
      if (wantsHelp) expect(result.stdout).toMatch(/^Usage: interlock validate/m);
    });
  }
});
