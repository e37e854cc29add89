import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compatToValidate } from '../../src/compat/compat-argv.js';
import { istioIptablesToValidate } from '../../src/compat/istio-iptables.js';
import { linkerdValidatorToValidate } from '../../src/compat/linkerd-validator.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';
import { buildValidateConfig, VALIDATE_FLAGS, type ValidateConfig } from '../../src/config/validate-config.js';
import { runCommand } from '../adversarial/cli-run.js';
import { asIstioValidation, MESH_FIXTURES, meshValidatorCases } from './mesh-fixtures.js';

type Env = Record<string, string>;

/** The drop-in argv mapped and then read by validate's own parser, as the CLI does. */
function validateConfigOf(argv: readonly string[], env: Env = {}, identity = { uid: 65534, gid: 65534 }) {
  const mapped = compatToValidate(argv, env, identity);
  if (mapped === undefined) throw new Error('not a drop-in argv');
  if (!mapped.ok) return mapped;
  const parsed = parseCommandLine('validate', mapped.value.slice(1), env, VALIDATE_FLAGS);
  return parsed.ok ? buildValidateConfig(parsed.value) : parsed;
}

function config(argv: readonly string[], env: Env = {}, identity = { uid: 65534, gid: 65534 }): ValidateConfig {
  const result = validateConfigOf(argv, env, identity);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

/** Linkerd's `command:` runs the image's shim at that path, which passes the program name first. */
function asInvoked(argv: readonly string[]): string[] {
  const [command, ...args] = argv;
  return command === '/usr/lib/linkerd/linkerd2-network-validator'
    ? ['linkerd2-network-validator', ...args]
    : [...argv];
}

const cases = meshValidatorCases();

describe('every validator container the meshes render is accepted as it is', () => {
  it('the fixtures hold both meshes from their oldest supported version to the newest', () => {
    const tags = (mesh: string) => new Set(cases.filter((c) => c.mesh === mesh).map((c) => c.tag));
    expect(tags('linkerd')).toContain('stable-2.14.0');
    expect(tags('linkerd')).toContain('edge-26.8.3');
    expect(tags('istio')).toContain('1.20.0');
    expect([...tags('istio')].some((tag) => tag.startsWith('HEAD'))).toBe(true);
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  it.each(cases.map((c) => [c.id, c] as const))('%s', (_id, testCase) => {
    const argv = testCase.mesh === 'istio' ? asIstioValidation(testCase) : asInvoked(testCase.argv);
    const built = config(argv, testCase.env, { uid: testCase.uid || 1337, gid: testCase.gid || 1337 });
    expect(built.interception.mesh).toBe(testCase.mesh);
    expect(built.failureExitCode).toBe(testCase.mesh === 'linkerd' ? 95 : 126);
    if (testCase.mesh === 'linkerd') {
      // The connect port is the probe port; the address only a hint; the listen port the outbound port.
      expect(built.probePort).toBe(20001);
      expect(built.interception.outboundPort).toBe(4140);
      expect(built.timeoutMs).toBe(10_000);
    }
  });

  it("Linkerd's IPv6 chart defaults ([fd00::1]:20001, [::]:4140) are read, from the chart's own literals", () => {
    const facts = JSON.parse(
      readFileSync(path.join(MESH_FIXTURES, 'facts/linkerd-network-validator-chart.json'), 'utf8'),
    ) as { tag: string; literalDefaults: string[] }[];
    const newest = facts.at(-1);
    expect(newest?.literalDefaults).toEqual(['1.1.1.1:20001', '[fd00::1]:20001', '0.0.0.0:4140', '[::]:4140']);
    const [v4Connect, v6Connect, , v6Listen] = newest?.literalDefaults ?? [];
    const built = config([
      'linkerd2-network-validator',
      '--connect-addr',
      v6Connect ?? '',
      '--listen-addr',
      v6Listen ?? '',
    ]);
    expect(built.probePort).toBe(20001);
    expect(built.interception.outboundPort).toBe(4140);
    expect(built.probeAddressHints.ipv6).toEqual({ family: 'ipv6', value: 0xfd000000000000000000000000000001n });
    expect(config(['linkerd2-network-validator', `--connect-addr=${v4Connect ?? ''}`]).probeAddressHints.ipv4).toEqual({
      family: 'ipv4',
      value: 0x01010101n,
    });
  });
});

describe("Linkerd's validator: its own flag, value and environment syntax", () => {
  const withTimeout = (text: string) => validateConfigOf(['linkerd2-network-validator', '--timeout', text]);

  it("--timeout takes the validator's units ms s m h d and a bare 0", () => {
    const facts = JSON.parse(
      readFileSync(path.join(MESH_FIXTURES, 'facts/linkerd-network-validator.json'), 'utf8'),
    ) as {
      timeoutUnits: string[];
    }[];
    // Every release has the same units; the bare `0` is the empty unit.
    for (const release of facts) expect(release.timeoutUnits).toEqual(['', 'ms', 's', 'm', 'h', 'd']);
    const expected: Record<string, number> = {
      '750ms': 750,
      '10s': 10_000,
      '2m': 120_000,
      '1h': 3_600_000,
      ' 10s ': 10_000,
      '+5s': 5_000,
      // Outside Interlock's 100 ms to 1 h the value is clamped, never refused: Linkerd accepts it.
      '0': 100,
      '0s': 100,
      '2d': 3_600_000,
    };
    for (const [text, ms] of Object.entries(expected)) {
      const result = withTimeout(text);
      expect(result.ok && result.value.timeoutMs, text).toBe(ms);
    }
  });

  it('--timeout refuses what the validator refuses: compounds, fractions, a bare number, overflow', () => {
    for (const text of ['1m30s', '1.5s', '120', 's', 'foobars', '18446744073709551615s', '10 s', '-1s', '']) {
      const result = withTimeout(text);
      expect(!result.ok && result.error.message, text).toMatch(/--timeout/);
    }
  });

  it('--connect-addr and --listen-addr are socket addresses; anything else is refused naming the flag', () => {
    for (const [flag, bad] of [
      ['--connect-addr', '1.1.1.1'],
      ['--connect-addr', 'fd00::1:20001'],
      ['--connect-addr', '[1.1.1.1]:20001'],
      ['--connect-addr', 'example.com:20001'],
      ['--connect-addr', '1.1.1.1:0'],
      ['--listen-addr', '0.0.0.0:65536'],
      ['--listen-addr', '[::]'],
    ] as const) {
      const result = validateConfigOf(['linkerd2-network-validator', flag, bad]);
      expect(!result.ok && result.error.message, bad).toContain(`${flag} ${JSON.stringify(bad)}`);
    }
  });

  it('reads only the environment names the validator reads, flags winning', () => {
    const env = { LINKERD_NETWORK_VALIDATOR_LOG_LEVEL: 'warn', LINKERD_NETWORK_VALIDATOR_LOG_FORMAT: 'json' };
    const fromEnv = config(['linkerd2-network-validator'], env);
    expect([fromEnv.logLevel, fromEnv.logFormat]).toEqual(['warn', 'json']);
    const flagsWin = config(['linkerd2-network-validator', '--log-level', 'debug', '--log-format', 'plain'], env);
    expect([flagsWin.logLevel, flagsWin.logFormat]).toEqual(['debug', 'plain']);
    // Names no release reads change nothing.
    const other = config(['linkerd2-network-validator'], { LINKERD_VALIDATOR_LOG_LEVEL: 'error' });
    expect(other.logLevel).toBe('info');
    expect(config(['linkerd2-network-validator', '--log-level', 'off']).logLevel).toBe('silent');
  });

  it('an option the validator does not have is an error naming it', () => {
    for (const bad of ['--connect-address', '--probe-port', '-t', 'stray']) {
      const result = linkerdValidatorToValidate(['--connect-addr', '1.1.1.1:20001', bad], {});
      expect(!result.ok && result.error.message).toContain(JSON.stringify(bad));
    }
  });
});

interface IstioRelease {
  readonly tag: string;
  readonly options: readonly { long: string; short: string | null; env: string[]; type?: string }[];
}

describe('istio-iptables: every option by its real names, and no others', () => {
  const releases = JSON.parse(
    readFileSync(path.join(MESH_FIXTURES, 'facts/istio-iptables-options.json'), 'utf8'),
  ) as IstioRelease[];
  const BASE = ['-p', '15001', '-z', '15006', '-u', '1337', '--run-validation', '--skip-rule-apply'];
  const BOOLEANS = new Set(
    releases.flatMap((release) =>
      release.options.filter((option) => option.type === 'bool' || !('type' in option)).map((option) => option.long),
    ),
  );
  const isBool = (long: string) =>
    [
      'dry-run',
      'restore-format',
      'iptables-trace-logging',
      'skip-rule-apply',
      'run-validation',
      'redirect-dns',
      'drop-invalid',
      'dual-stack',
      'capture-all-dns',
      'cni-mode',
      'reconcile',
      'cleanup-only',
      'force-apply',
      'native-nftables',
    ].includes(long);

  it('accepts every long and short name of every release, 1.20 to the default branch', () => {
    expect(BOOLEANS.size).toBeGreaterThan(0);
    let checked = 0;
    for (const release of releases) {
      for (const option of release.options) {
        const sample = option.long.includes('port') ? '15002' : option.long.includes('timeout') ? '2s' : 'x';
        const spellings = [`--${option.long}`, ...(option.short ? [`-${option.short}`] : [])];
        for (const name of spellings) {
          const extra = isBool(option.long) ? [name] : [name, safeValue(option.long, sample)];
          const result = istioIptablesToValidate([...BASE, ...extra], {}, { uid: 1337, gid: 1337 });
          expect(result.ok ? 'ok' : result.error.message, `${release.tag} ${name}`).toBe('ok');
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(300);
  });

  it('refuses names istio-iptables does not have, naming them', () => {
    for (const bad of [
      '--exclude-interfaces',
      '--host-ipv4-loopback-cidr',
      '--proxy-port',
      '-Z',
      '--istio-exclude-interface',
    ]) {
      const result = istioIptablesToValidate([...BASE, bad, 'eth9'], {});
      expect(!result.ok && result.error.message, bad).toContain(`unknown istio-iptables option ${JSON.stringify(bad)}`);
    }
  });

  it("--istio-exclude-interfaces (-c) and -i '' mean what istio-iptables means", () => {
    const c = config(['istio-iptables', ...BASE, '--istio-exclude-interfaces', 'eth9']);
    expect(c.interception.excludeInterfaces).toEqual(['eth9']);
    const noCidrs = config(['istio-iptables', ...BASE, '-i', '', '-q', '3306']);
    expect(noCidrs.interception.includeOutboundCidrs).toEqual({ kind: 'list', cidrs: [] });
  });

  it('proxy metadata in the environment: DNS capture, invalid drop (Istio copies ProxyMetadata into the env)', () => {
    const plain = config(['istio-iptables', ...BASE]);
    expect(plain.interception.dnsCapture).toBeUndefined();
    expect(plain.interception.dropInvalid).toBe(false);
    for (const env of [{ ISTIO_META_DNS_CAPTURE: 'true' }, { REDIRECT_DNS: '1' }]) {
      expect(config(['istio-iptables', ...BASE], env).interception.dnsCapture).toEqual({ servers: [] });
    }
    for (const env of [{ INVALID_DROP: 'true' }, { DROP_INVALID: 'T' }]) {
      expect(config(['istio-iptables', ...BASE], env).interception.dropInvalid).toBe(true);
    }
    // argv wins over the environment, as pflag reads the environment first.
    expect(
      config(['istio-iptables', ...BASE, '--drop-invalid=false'], { INVALID_DROP: 'true' }).interception.dropInvalid,
    ).toBe(false);
    // An unparseable boolean is ignored, as istio-iptables ignores it.
    expect(config(['istio-iptables', ...BASE], { INVALID_DROP: 'yes' }).interception.dropInvalid).toBe(false);
    // Value options read their bound environment names too.
    expect(
      config(['istio-iptables', '--run-validation', '--skip-rule-apply'], { PROXY_UID: '1234' }).interception.proxyUids,
    ).toEqual([1234]);
  });

  it('without -g the group is the uid, or the proxy runAsGroup the validator itself runs with', () => {
    const args = [
      'istio-iptables',
      '-p',
      '15001',
      '-z',
      '15006',
      '-u',
      '1234',
      '--run-validation',
      '--skip-rule-apply',
    ];
    expect(config(args, {}, { uid: 1234, gid: 4321 }).interception.proxyGids).toEqual([4321]);
    expect(config(args, {}, { uid: 65534, gid: 65534 }).interception.proxyGids).toEqual([1234]);
    expect(config(args, {}, { uid: 1234, gid: 0 }).interception.proxyGids).toEqual([1337]);
    expect(config([...args, '-g', '777'], {}, { uid: 1234, gid: 4321 }).interception.proxyGids).toEqual([777]);
  });

  it("the outbound exclusions are always explicit: -o, else istio-cni's default 15020", () => {
    expect(config(['istio-iptables', ...BASE]).interception.excludeOutboundPorts).toEqual({
      kind: 'ranges',
      ranges: [{ from: 15020, to: 15020 }],
    });
    expect(config(['istio-iptables', ...BASE, '-o', '3306']).interception.excludeOutboundPorts).toEqual({
      kind: 'ranges',
      ranges: [{ from: 3306, to: 3306 }],
    });
  });
});

function safeValue(long: string, sample: string): string {
  if (long.includes('cidr')) return '10.0.0.0/8';
  if (long === 'istio-inbound-interception-mode') return 'REDIRECT';
  if (long.includes('ports') || long.includes('port')) return '15002';
  if (long.includes('uid') || long.includes('gid')) return '1337';
  if (long.includes('interfaces')) return 'eth9';
  if (long === 'log_output_level') return 'default:info';
  return sample;
}

describe('drop-in program names: one definition, an unknown name exits 64 at once', () => {
  it.each([
    ['/usr/lib/linkerd/foo'],
    ['istio-iptables.sh'],
    ['linkerd2-network-validatorX'],
    ['validate', '/usr/lib/linkerd/foo'],
    ['validate', 'istio-iptables.sh', '--run-validation'],
  ])('interlock %s', async (...argv) => {
    // The image's heap cap: a recursion dies there with 134 instead of growing to gigabytes.
    const run = await runCommand(argv, { guardMs: 20_000, env: { NODE_OPTIONS: '--max-old-space-size=96' } });
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain(
      `unknown program name ${JSON.stringify(argv.at(-1) === '--run-validation' ? argv[1] : argv.at(-1))}`,
    );
  });
});
