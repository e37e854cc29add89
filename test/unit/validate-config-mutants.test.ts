import { describe, expect, it } from 'vitest';
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

function parsed(argv: string[], env: Record<string, string> = {}): ParsedFlags {
  const result = parseCommandLine('validate', argv, env, VALIDATE_FLAGS);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

function config(argv: string[], env: Record<string, string> = {}): ValidateConfig {
  const result = buildValidateConfig(parsed(argv, env));
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

describe('every value flag given replaces its default', () => {
  it('from argv', () => {
    const given = config([
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
    expect(config([], env)).toMatchObject({
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
    expect(config(['--mesh', 'linkerd']).reportEvent).toBe(false);
    expect(config(['--mesh', 'linkerd', '--report-event']).reportEvent).toBe(true);
    expect(config(['--mesh', 'linkerd'], { INTERLOCK_REPORT_EVENT: 'true' }).reportEvent).toBe(true);
    expect(config(['--mesh', 'linkerd'], { INTERLOCK_REPORT_EVENT: 'false' }).reportEvent).toBe(false);
  });
});

describe('buildValidateConfig without the table defaults', () => {
  // Its fallbacks repeat the flag table's defaults; two copies of a default must agree.
  it('falls back to the same defaults the flag table declares', () => {
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
