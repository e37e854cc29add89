import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatPortSet } from '../../src/addr/port-set.js';
import { VERSION } from '../../src/cli/version.js';
import { buildInterceptionSpec } from '../../src/config/build-interception.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';
import type { ParsedFlags } from '../../src/config/parsed-flags.js';
import {
  buildValidateConfig,
  FAMILY_FLAG,
  LOG_LEVEL_FLAG,
  REPORT_EVENT_FLAG,
  TERMINATION_LOG_FLAG,
  VALIDATE_FLAGS,
  type ValidateConfig,
} from '../../src/config/validate-config.js';

function build(argv: string[], env: Record<string, string> = {}): ValidateConfig {
  const parsed = parseCommandLine('validate', argv, env, VALIDATE_FLAGS);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const config = buildValidateConfig(parsed.value);
  if (!config.ok) throw new Error(config.error.message);
  return config.value;
}

function error(argv: string[], env: Record<string, string> = {}): string {
  const parsed = parseCommandLine('validate', argv, env, VALIDATE_FLAGS);
  if (!parsed.ok) return parsed.error.message;
  const config = buildValidateConfig(parsed.value);
  if (config.ok) throw new Error(`expected a configuration error for ${argv.join(' ')}`);
  return config.error.message;
}

function parsed(argv: string[], env: Record<string, string> = {}): ParsedFlags {
  const result = parseCommandLine('validate', argv, env, VALIDATE_FLAGS);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

function refusal(argv: string[], env: Record<string, string> = {}): { reason: string; message: string } {
  const result = buildValidateConfig(parsed(argv, env));
  if (result.ok) throw new Error(`expected ${JSON.stringify(argv)} to be refused`);
  return result.error;
}

/** A ParsedFlags as a caller other than parseCommandLine may build it: only what it sets, no defaults. */
function bare(values: Record<string, unknown>, sources: Record<string, string> = {}): ParsedFlags {
  return { command: 'validate', values: new Map(Object.entries(values)), sources: new Map(Object.entries(sources)) };
}

describe('mesh presets', () => {
  it('linkerd: 4143/4140, uid 2102, inbound 4190,4191 excluded, exit 95', () => {
    const config = build(['--mesh', 'linkerd']);
    expect(config.interception).toMatchObject({
      inboundPort: 4143,
      outboundPort: 4140,
      proxyUids: [2102],
      proxyGids: [],
    });
    expect(formatPortSet(config.interception.excludeInboundPorts)).toBe('4190,4191');
    expect(config.failureExitCode).toBe(95);
  });

  it('istio: 15006/15001, uid 1337, inbound 15008,15020,15021,15090 and outbound 15020 excluded, exit 126', () => {
    const config = build(['--mesh', 'istio']);
    expect(config.interception).toMatchObject({
      inboundPort: 15006,
      outboundPort: 15001,
      proxyUids: [1337],
      proxyGids: [1337],
    });
    // 15008 is Istio's inbound tunnel (HBONE): never redirected inbound, kept as its own field.
    expect(formatPortSet(config.interception.excludeInboundPorts)).toBe('15020,15021,15090');
    expect(config.interception.inboundTunnelPort).toBe(15008);
    expect(formatPortSet(config.interception.excludeOutboundPorts)).toBe('15020');
    expect(config.failureExitCode).toBe(126);
  });

  it('generic needs explicit ports and fails with 97', () => {
    expect(error(['--mesh', 'generic'])).toMatch(/--inbound-port/);
    const config = build(['--mesh', 'generic', '--inbound-port', '7000', '--outbound-port', '7001']);
    expect(config.failureExitCode).toBe(97);
  });
});

describe('flags and environment', () => {
  it('reads INTERLOCK_* variables and lets flags win', () => {
    const env = { INTERLOCK_MESH: 'linkerd', INTERLOCK_TIMEOUT: '3s', INTERLOCK_OUTBOUND_PORT: '5000' };
    const fromEnv = build([], env);
    expect(fromEnv.timeoutMs).toBe(3000);
    expect(fromEnv.interception.outboundPort).toBe(5000);
    const flagWins = build(['--outbound-port=6000', '--timeout', '500ms'], env);
    expect(flagWins.interception.outboundPort).toBe(6000);
    expect(flagWins.timeoutMs).toBe(500);
  });

  it('defaults: 10s, auto family, json logs, rules auto, /dev/termination-log', () => {
    const config = build(['--mesh', 'istio']);
    expect(config).toMatchObject({
      timeoutMs: 10_000,
      family: 'auto',
      logFormat: 'json',
      rules: 'auto',
      terminationLog: '/dev/termination-log',
    });
  });

  it('port lists take ranges in both spellings, * and empty', () => {
    const config = build([
      '--mesh',
      'linkerd',
      '--exclude-outbound-ports',
      '3306,5432:5440,8000-8010',
      '--include-inbound-ports',
      '',
    ]);
    expect(formatPortSet(config.interception.excludeOutboundPorts)).toBe('3306,5432-5440,8000-8010');
    expect(formatPortSet(config.interception.includeInboundPorts)).toBe('');
    expect(build(['--mesh', 'linkerd', '--include-inbound-ports', '*']).interception.includeInboundPorts.kind).toBe(
      'all',
    );
  });

  it('--probe-address takes one address per family', () => {
    const config = build(['--mesh', 'linkerd', '--probe-address', '10.1.2.3,fd00::9']);
    expect(Object.keys(config.probeAddresses).sort()).toEqual(['ipv4', 'ipv6']);
  });

  const invalid: Array<[string[], RegExp]> = [
    [['--mesh', 'consul'], /^--mesh="consul": expected one of linkerd, istio, istio-ambient, kuma, generic/],
    [['--mesh', 'linkerd', '--timeout', 'soon'], /^--timeout="soon"/],
    [['--mesh', 'linkerd', '--timeout', '50ms'], /^--timeout="50ms"/],
    [['--mesh', 'linkerd', '--inbound-port', '70000'], /^--inbound-port="70000": expected a port/],
    [['--mesh', 'linkerd', '--outbound-port', '4143'], /^--outbound-port="4143": must differ/],
    [['--mesh', 'linkerd', '--family', 'ipv5'], /^--family="ipv5"/],
    [['--mesh', 'linkerd', '--failure-exit-code', '64'], /^--failure-exit-code="64"/],
    [['--mesh', 'linkerd', '--failure-exit-code', '300'], /^--failure-exit-code="300"/],
    [
      ['--mesh', 'linkerd', '--failure-exit-code', '66'],
      /^--failure-exit-code="66": expected 2-255 except 64, 65, 66, 69, 70, 74, 130, 143/,
    ],
    [['--mesh', 'linkerd', '--exclude-inbound-ports', '10-5'], /ends before it starts/],
    [['--mesh', 'linkerd', '--proxy-uid', 'proxy'], /^--proxy-uid="proxy": "proxy" is not a numeric uid/],
    [['--mesh', 'linkerd', '--probe-address', 'example.com'], /^--probe-address="example.com"/],
    [['--mesh', 'linkerd', '--log-format', 'xml'], /^--log-format="xml"/],
    [['--mesh', 'linkerd', '--rules', 'maybe'], /^--rules="maybe"/],
    [['--mesh', 'linkerd', '--no-such-flag'], /^--no-such-flag: unknown flag/],
    [['--mesh'], /^--mesh: needs a value/],
    [['--mesh', ''], /^--mesh="": expected one of linkerd, istio, istio-ambient, kuma, generic/],
    [['--mesh', 'linkerd', '--mesh', 'istio'], /^--mesh="istio": given 2 times; give it once/],
    [['--mesh', 'linkerd', '--tproxy=false'], /^--tproxy="false": is a switch and takes no value/],
    [['--mesh', 'linkerd', '--help=false'], /^--help="false": is a switch/],
    [['--mesh', 'linkerd', '--probe-port', '--tproxy'], /^--probe-port="--tproxy": needs a value/],
    [['--mesh', 'linkerd', 'extra'], /^argument="extra": unexpected argument/],
    [['--mesh', 'linkerd', '--failure-exit-code', '1'], /^--failure-exit-code="1": expected 2-255 except 64,/],
    [['--mesh', 'linkerd', '--failure-exit-code', '74'], /^--failure-exit-code="74"/],
    [['--mesh', 'linkerd', '--dns-servers', '10.0.0.10'], /^--dns-servers: needs --dns-capture/],
    [['--mesh', 'linkerd', '--probe-address-hint', 'x'], /^--probe-address-hint="x": "x" is not an IP address/],
  ];
  for (const [argv, pattern] of invalid) {
    it(`rejects ${argv.join(' ')}`, () => {
      expect(error(argv)).toMatch(pattern);
    });
  }

  it('help and version are never read from the environment', () => {
    const parsed = parseCommandLine(
      'validate',
      ['--mesh', 'linkerd'],
      { INTERLOCK_HELP: 'true', INTERLOCK_VERSION: '1' },
      VALIDATE_FLAGS,
    );
    expect(parsed.ok && [...parsed.value.values.keys()]).not.toContain('help');
    expect(parsed.ok && [...parsed.value.values.keys()]).not.toContain('version');
  });

  it('switches from the environment take true/false; from argv they take no value', () => {
    expect(
      build(['--mesh', 'istio'], { INTERLOCK_PROXY_LOOPBACK_INBOUND: 'false' }).interception.proxyLoopbackToInbound,
    ).toBe(false);
    expect(build(['--mesh', 'linkerd', '--tproxy']).interception.tproxy).toBe(true);
    expect(error(['--mesh', 'linkerd'], { INTERLOCK_TPROXY: 'maybe' })).toMatch(
      /^INTERLOCK_TPROXY="maybe": expected true or false/,
    );
  });

  it('--dns-capture with and without --dns-servers; --probe-address-hint per family', () => {
    expect(build(['--mesh', 'istio', '--dns-capture']).interception.dnsCapture).toEqual({ servers: [] });
    expect(
      build(['--mesh', 'istio', '--dns-capture', '--dns-servers', '10.0.0.10']).interception.dnsCapture?.servers,
    ).toHaveLength(1);
    expect(build(['--mesh', 'istio']).interception.dnsCapture).toBeUndefined();
    expect(
      Object.keys(build(['--mesh', 'linkerd', '--probe-address-hint', '1.1.1.1,fd00::1']).probeAddressHints).sort(),
    ).toEqual(['ipv4', 'ipv6']);
    expect(build(['--mesh', 'linkerd']).probeAddressHints).toEqual({});
  });

  it('an echoed value is truncated to 64 characters and escaped', () => {
    const message = error(['--mesh', `\u202e${'x'.repeat(1000)}\u0007`]);
    expect(message).toContain('\\u{202e}');
    expect(message).not.toContain('\u202e');
    expect(message).not.toContain('\u0007');
    expect(message.length).toBeLessThan(200);
  });

  it('an invalid environment variable is named as such', () => {
    expect(error([], { INTERLOCK_MESH: 'linkerd', INTERLOCK_FAMILY: 'both' })).toMatch(/^INTERLOCK_FAMILY="both"/);
  });

  it('the version constant matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });
});

describe('every value flag given replaces its default', () => {
  it('from argv', () => {
    const given = build([
      '--mesh',
      'linkerd',
      '--family',
      'ipv6',
      '--termination-log',
      '/tmp/term',
      '--log-format',
      'plain',
      '--log-level',
      'debug',
      '--rules',
      'required',
    ]);
    expect(given).toMatchObject({
      family: 'ipv6',
      terminationLog: '/tmp/term',
      logFormat: 'plain',
      logLevel: 'debug',
      rules: 'required',
    });
  });

  it('from the environment', () => {
    const env = {
      INTERLOCK_MESH: 'istio',
      INTERLOCK_FAMILY: 'dual',
      INTERLOCK_LOG_LEVEL: 'silent',
      INTERLOCK_RULES: 'off',
      INTERLOCK_TERMINATION_LOG: 'term.txt',
    };
    expect(build([], env)).toMatchObject({
      family: 'dual',
      logLevel: 'silent',
      rules: 'off',
      terminationLog: 'term.txt',
      logFormat: 'json',
    });
  });
});

describe('--report-event', () => {
  it('off unless given; on from argv or from INTERLOCK_REPORT_EVENT=true', () => {
    expect(build(['--mesh', 'linkerd']).reportEvent).toBe(false);
    expect(build(['--mesh', 'linkerd', '--report-event']).reportEvent).toBe(true);
    expect(build(['--mesh', 'linkerd'], { INTERLOCK_REPORT_EVENT: 'true' }).reportEvent).toBe(true);
    expect(build(['--mesh', 'linkerd'], { INTERLOCK_REPORT_EVENT: 'false' }).reportEvent).toBe(false);
  });
});

describe('buildValidateConfig from values without the defaults filled in', () => {
  // A map built outside the parser still reads each flag's one declared default.
  it('reads the defaults the flag table declares', () => {
    const result = buildValidateConfig(bare({ mesh: 'linkerd' }));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value).toMatchObject({
      family: FAMILY_FLAG.default,
      terminationLog: TERMINATION_LOG_FLAG.default,
      logFormat: 'json',
      logLevel: LOG_LEVEL_FLAG.default,
      rules: 'auto',
      timeoutMs: 10_000,
      reportEvent: REPORT_EVENT_FLAG.default,
      failureExitCode: 95,
    });
    expect([result.value.family, result.value.terminationLog, result.value.logLevel]).toEqual([
      'auto',
      '/dev/termination-log',
      'info',
    ]);
  });

  it('without --mesh is the generic preset', () => {
    const result = buildInterceptionSpec(bare({ 'inbound-port': 7000, 'outbound-port': 7001 }));
    expect(result.ok && result.value.mesh).toBe('generic');
  });

  it('names --dns-servers when it has no source recorded', () => {
    const result = buildInterceptionSpec(bare({ mesh: 'linkerd', 'dns-servers': [] }));
    expect(!result.ok && result.error.message).toBe(
      '--dns-servers: needs --dns-capture (or INTERLOCK_DNS_CAPTURE=true)',
    );
  });
});

describe('interception spec refusals name the flag to give', () => {
  it('generic without an inbound port', () => {
    expect(refusal(['--mesh', 'generic', '--outbound-port', '7001'])).toEqual({
      reason: 'ConfigInvalid',
      message: '--inbound-port: --mesh generic has no inbound port: give --inbound-port',
    });
  });

  it('generic without an outbound port', () => {
    expect(refusal(['--mesh', 'generic', '--inbound-port', '7000'])).toEqual({
      reason: 'ConfigInvalid',
      message: '--outbound-port: --mesh generic has no outbound port: give --outbound-port',
    });
  });

  it('DNS capture without a DNS port', () => {
    expect(
      refusal(['--mesh', 'generic', '--inbound-port', '7000', '--outbound-port', '7001', '--dns-capture']),
    ).toEqual({
      reason: 'ConfigInvalid',
      message: '--dns-port="0": --dns-capture needs the port captured DNS goes to: give --dns-port',
    });
    expect(refusal(['--mesh', 'istio', '--dns-capture', '--dns-port', '0']).message).toMatch(
      /^--dns-port="0": --dns-capture needs/,
    );
  });

  it('--dns-servers without capture, named as the operator gave it', () => {
    expect(refusal(['--mesh', 'istio', '--dns-servers', '10.0.0.10'])).toEqual({
      reason: 'ConfigInvalid',
      message: '--dns-servers: needs --dns-capture (or INTERLOCK_DNS_CAPTURE=true)',
    });
    expect(refusal(['--mesh', 'istio'], { INTERLOCK_DNS_SERVERS: '10.0.0.10' }).message).toBe(
      'INTERLOCK_DNS_SERVERS: needs --dns-capture (or INTERLOCK_DNS_CAPTURE=true)',
    );
    expect(
      refusal(['--mesh', 'istio'], { INTERLOCK_DNS_SERVERS: '10.0.0.10', INTERLOCK_DNS_CAPTURE: 'false' }).message,
    ).toMatch(/^INTERLOCK_DNS_SERVERS: needs/);
  });
});
