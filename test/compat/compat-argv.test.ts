import { describe, expect, it } from 'vitest';
import { compatModeOf, compatToValidate } from '../../src/compat/compat-argv.js';
import { istioIptablesToValidate, istioLogLevel } from '../../src/compat/istio-iptables.js';
import { linkerdValidatorToValidate, tracingLevel } from '../../src/compat/linkerd-validator.js';

/** Istio's sidecar injection template for istio-validation (CNI mode), args after the entrypoint. */
const ISTIO_ARGS = [
  'istio-iptables',
  '-p',
  '15001',
  '-z',
  '15006',
  '-u',
  '1337',
  '-m',
  'REDIRECT',
  '-i',
  '*',
  '-x',
  '',
  '-b',
  '*',
  '-d',
  '15090,15021,15020',
  '--log_output_level=default:info',
  '--run-validation',
  '--skip-rule-apply',
];
/** Linkerd's proxy injector (CNI mode): command is the validator path, then these args (chart defaults). */
const LINKERD_ARGS = [
  '--log-format',
  'plain',
  '--log-level',
  'debug',
  '--connect-addr',
  '1.1.1.1:20001',
  '--listen-addr',
  '0.0.0.0:4140',
  '--timeout',
  '10s',
];

describe('Istio: istio-iptables --run-validation --skip-rule-apply', () => {
  it('maps what Istio injects onto validate with the istio preset', () => {
    expect(compatToValidate(ISTIO_ARGS, {})).toEqual({
      ok: true,
      value: [
        'validate',
        '--mesh',
        'istio',
        '--log-format',
        'plain',
        '--outbound-port=15001',
        '--inbound-port=15006',
        '--proxy-uid=1337',
        '--include-outbound-cidrs=*',
        '--exclude-outbound-cidrs=',
        '--include-inbound-ports=*',
        '--exclude-inbound-ports=15090,15021,15020',
        '--proxy-gid=1337',
        '--exclude-outbound-ports=15020',
        '--log-level',
        'info',
      ],
    });
  });

  it('maps every other option issue 10 lists, and the two environment variables', () => {
    const extra = [
      '-g',
      '1337',
      '-q',
      '3306',
      '-o',
      '15020,9000',
      '-k',
      'net1',
      '-c',
      'eth9',
      '--log_as_json',
      '--native-nftables',
      '--iptables-probe-port',
      '15002',
      '--probe-timeout',
      '1m30s',
      '-m',
      'TPROXY',
    ];
    const mapped = istioIptablesToValidate([...ISTIO_ARGS.slice(1), ...extra], {});
    expect(mapped.ok && mapped.value).toEqual(
      expect.arrayContaining([
        '--log-format',
        'json',
        '--proxy-gid=1337',
        '--include-outbound-ports=3306',
        '--exclude-outbound-ports=15020,9000',
        '--reroute-interfaces=net1',
        '--exclude-interfaces=eth9',
        '--probe-port=15002',
        '--timeout=90000ms',
        '--tproxy',
      ]),
    );
    const fromEnv = istioIptablesToValidate(ISTIO_ARGS.slice(1), { IPTABLES_PROBE_PORT: '15333', PROBE_TIMEOUT: '5s' });
    expect(fromEnv.ok && fromEnv.value).toEqual(expect.arrayContaining(['--probe-port=15333', '--timeout=5000ms']));
    const flagWins = istioIptablesToValidate([...ISTIO_ARGS.slice(1), '--iptables-probe-port=15002'], {
      IPTABLES_PROBE_PORT: '15333',
    });
    expect(flagWins.ok && flagWins.value.filter((arg) => arg.startsWith('--probe-port'))).toEqual([
      '--probe-port=15002',
    ]);
  });

  it('refuses to write rules: without --run-validation or --skip-rule-apply it is an error saying so', () => {
    for (const drop of ['--run-validation', '--skip-rule-apply']) {
      const mapped = istioIptablesToValidate(
        ISTIO_ARGS.slice(1).filter((arg) => arg !== drop),
        {},
      );
      expect(!mapped.ok && mapped.error.message).toMatch(
        new RegExp(`without ${drop} would write iptables rules; Interlock only validates and never writes rules`),
      );
    }
  });

  it('an unknown option is an error naming it, never ignored', () => {
    for (const bad of ['--cleanup-onl', '-Z', '--reconciles=true', 'stray', '--exclude-interfaces']) {
      const mapped = istioIptablesToValidate([...ISTIO_ARGS.slice(1), bad], {});
      expect(!mapped.ok && mapped.error.reason).toBe('ConfigInvalid');
      expect(!mapped.ok && mapped.error.message).toContain(JSON.stringify(bad.split('=')[0]));
    }
    const badMode = istioIptablesToValidate([...ISTIO_ARGS.slice(1), '-m', 'NAT'], {});
    expect(!badMode.ok && badMode.error.message).toMatch(/-m "NAT": expected REDIRECT or TPROXY/);
  });

  it('reads pflag spellings: -p=1, -p1, long names', () => {
    for (const spelling of [['-p=16001'], ['-p16001'], ['--envoy-port', '16001'], ['--envoy-port=16001']]) {
      const mapped = istioIptablesToValidate([...spelling, '--run-validation', '--skip-rule-apply'], {});
      expect(mapped.ok && mapped.value).toContain('--outbound-port=16001');
    }
  });

  it('log levels: the default scope wins, none is silent', () => {
    expect(istioLogLevel('default:debug,validation:error')).toBe('debug');
    expect(istioLogLevel('none')).toBe('silent');
    expect(istioLogLevel('validation:warn')).toBe('warn');
  });
});

describe('Linkerd: linkerd2-network-validator', () => {
  it('through the image path or bare flags: listen port = outbound port, connect address = probe address hint', () => {
    const expected = [
      'validate',
      '--mesh',
      'linkerd',
      '--log-format',
      'plain',
      '--log-level',
      'debug',
      '--outbound-port=4140',
      '--probe-address-hint=1.1.1.1',
      '--probe-port=20001',
      '--timeout=10000ms',
    ];
    expect(compatToValidate(['/usr/lib/linkerd/linkerd2-network-validator', ...LINKERD_ARGS], {})).toEqual({
      ok: true,
      value: expected,
    });
    expect(compatToValidate(['linkerd2-network-validator', ...LINKERD_ARGS], {})).toEqual({
      ok: true,
      value: expected,
    });
    expect(compatToValidate(LINKERD_ARGS, {})).toEqual({ ok: true, value: expected });
  });

  it('takes the IPv6 chart default and --flag=value', () => {
    const mapped = linkerdValidatorToValidate(['--connect-addr=[fd00::1]:20001', '--listen-addr=[::]:4140'], {});
    expect(mapped.ok && mapped.value).toEqual([
      'validate',
      '--mesh',
      'linkerd',
      '--outbound-port=4140',
      '--probe-address-hint=fd00::1',
      '--probe-port=20001',
    ]);
  });

  it('reads LINKERD_NETWORK_VALIDATOR_LOG_LEVEL/LOG_FORMAT; flags win', () => {
    const env = {
      LINKERD_NETWORK_VALIDATOR_LOG_LEVEL: 'linkerd=trace,warn',
      LINKERD_NETWORK_VALIDATOR_LOG_FORMAT: 'json',
    };
    expect(linkerdValidatorToValidate([], env)).toEqual({
      ok: true,
      value: ['validate', '--mesh', 'linkerd', '--log-format', 'json', '--log-level', 'warn'],
    });
    expect(linkerdValidatorToValidate(['--log-format', 'plain'], env)).toEqual({
      ok: true,
      value: ['validate', '--mesh', 'linkerd', '--log-format', 'plain', '--log-level', 'warn'],
    });
    expect(tracingLevel('linkerd=debug')).toBe('debug');
  });

  it('bad values and unknown flags are errors naming them', () => {
    expect(linkerdValidatorToValidate(['--listen-addr', '4140'], {})).toMatchObject({
      ok: false,
      error: { message: expect.stringMatching(/--listen-addr "4140": expected ADDRESS:PORT/) },
    });
    expect(linkerdValidatorToValidate(['--log-format', 'yaml'], {})).toMatchObject({ ok: false });
    expect(linkerdValidatorToValidate(['--connect-addr', '1.1.1.1:99999'], {})).toMatchObject({ ok: false });
    expect(linkerdValidatorToValidate(['--retries', '3'], {})).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('"--retries"') },
    });
  });
});

describe('which mode', () => {
  it("Interlock's own validate flags are never taken for Linkerd's", () => {
    expect(compatModeOf(['--mesh', 'linkerd', '--log-format', 'plain', '--timeout', '5s'])).toBeUndefined();
    expect(compatToValidate(['--log-level', 'debug'], {})).toBeUndefined();
    expect(compatModeOf(['istio-iptables'])).toBe('istio');
    expect(compatModeOf(['--timeout', '1s', '--listen-addr=0.0.0.0:4140'])).toBe('linkerd');
  });
});

describe('the entrypoint: `interlock validate` followed by what the mesh injects', () => {
  it('exits 64 naming the option or the refusal, before any validation runs', async () => {
    const { runCli } = await import('../../src/cli/run-cli.js');
    const unknown = await runCli(['validate', ...ISTIO_ARGS, '--exclude-interfaces', 'eth9']);
    expect(unknown).toMatchObject({ exitCode: 64, stderr: expect.stringContaining('"--exclude-interfaces"') });
    const writes = await runCli(['validate', ...ISTIO_ARGS.filter((arg) => arg !== '--run-validation')]);
    expect(writes).toMatchObject({ exitCode: 64, stderr: expect.stringContaining('never writes rules') });
    const linkerd = await runCli(['linkerd2-network-validator', '--listen-addr', 'nope']);
    expect(linkerd).toMatchObject({ exitCode: 64, stderr: expect.stringContaining('--listen-addr "nope"') });
  });
});
