import { describe, expect, it } from 'vitest';
import { buildQuestions } from '../../src/expect/questions.js';
import { specFromFlags } from '../harness/spec.js';

const spec = specFromFlags;

describe('expectations from configuration', () => {
  it('linkerd: outbound and inbound capture, proxy uid excluded, excluded port boundaries', () => {
    const questions = buildQuestions(spec(['--mesh=linkerd', '--exclude-outbound-ports=5432:5440']), { families: ['ipv4'] });
    const byId = new Map(questions.map((q) => [q.id, q]));
    expect(byId.get('ipv4/outbound/app')?.expected).toEqual({ kind: 'redirect', port: 4140 });
    expect(byId.get('ipv4/inbound/app')?.expected).toEqual({ kind: 'redirect', port: 4143 });
    expect(byId.get('ipv4/outbound/proxy-uid-2102')?.expected).toEqual({ kind: 'not-redirected' });
    expect(byId.get('ipv4/outbound/excluded-port-5432')?.expected).toEqual({ kind: 'not-redirected' });
    expect(byId.get('ipv4/outbound/excluded-port-5440')?.expected).toEqual({ kind: 'not-redirected' });
    expect(byId.get('ipv4/inbound/excluded-port-4190')?.expected).toEqual({ kind: 'not-redirected' });
  });

  it('uses the caller’s sample destination and asks IPv6 only when asked', () => {
    const questions = buildQuestions(spec(['--mesh=linkerd']), { families: ['ipv4'], sampleDestinations: { ipv4: { family: 'ipv4', value: 0x0a000001n } } });
    expect(questions.every((q) => q.packet.family === 'ipv4')).toBe(true);
    expect(questions.find((q) => q.id === 'ipv4/outbound/app')?.description).toContain('10.0.0.1:80');
  });

  it('istio with no included ranges expects outbound left alone, included ports captured', () => {
    const questions = buildQuestions(spec(['--mesh=istio', '--include-outbound-cidrs=', '--include-outbound-ports=31000-31002']), { families: ['ipv4'] });
    expect(questions.find((q) => q.id === 'ipv4/outbound/app')?.expected).toEqual({ kind: 'not-redirected' });
    expect(questions.find((q) => q.id === 'ipv4/outbound/included-port-31002')?.expected).toEqual({ kind: 'redirect', port: 15001 });
  });

  it('tproxy inbound expects TPROXY to the inbound port', () => {
    const questions = buildQuestions(spec(['--mesh=istio', '--tproxy']), { families: ['ipv6'] });
    expect(questions.find((q) => q.id === 'ipv6/inbound/app')?.expected).toEqual({ kind: 'tproxy', port: 15006 });
  });
});
