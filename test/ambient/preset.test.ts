import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatIp } from '../../src/addr/ip.js';
import { buildInterceptionSpec } from '../../src/config/build-interception.js';
import { PRESETS } from '../../src/config/interception.js';
import { INTERCEPTION_FLAGS } from '../../src/config/interception-flags.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';
import { specFromFlags } from '../harness/spec.js';

interface Fact {
  readonly tag: string;
  readonly fact: string;
  readonly name: string;
  readonly value: string;
}

const FACTS = JSON.parse(
  readFileSync(new URL('../fixtures/meshes/facts/istio-ambient.json', import.meta.url), 'utf8'),
) as Fact[];

/** The newest pinned value of a fact: the preset speaks for the default branch. */
function newest(fact: string, name: string): string {
  const found = FACTS.filter((entry) => entry.fact === fact && entry.name === name);
  const last = found.at(-1);
  if (!last) throw new Error(`no fact ${fact}/${name}`);
  return last.value;
}

const num = (fact: string, name: string): number => Number(newest(fact, name));

describe('the istio-ambient preset is istio-cni’s in-pod configuration', () => {
  const { spec, failureExitCode } = PRESETS['istio-ambient'];

  it('takes its ports from istio-cni’s constants', () => {
    expect(spec.outboundPort).toBe(num('constant', 'ZtunnelOutboundPort'));
    expect(spec.inboundPort).toBe(num('constant', 'ZtunnelInboundPlaintextPort'));
    expect(spec.inboundTunnelPort).toBe(num('constant', 'ZtunnelInboundPort'));
    expect(spec.dnsPort).toBe(num('constant', 'DNSCapturePort'));
  });

  it('takes its marks and route table from istio-cni’s constants', () => {
    expect(spec.proxyMarks).toEqual([{ value: num('constant', 'InpodMark'), mask: num('constant', 'InpodMask') }]);
    const accepted = { value: num('constant', 'InpodTProxyMark'), mask: num('constant', 'InpodTProxyMask') };
    expect(spec.acceptedMarks).toEqual([accepted]);
    expect(spec.markRoute).toEqual({ mark: accepted, table: num('constant', 'RouteTableInbound') });
    expect(newest('ip-rule', 'inpod-mark-rule')).toBe('fwmark 0x111/0xfff pref 32764 lookup 100');
  });

  it('accepts the default host-probe addresses of both families', () => {
    expect(spec.hostProbeAddresses.map(formatIp)).toEqual([
      newest('constant', 'DefaultHostProbeSNATIP'),
      newest('constant', 'DefaultHostProbeSNATIPV6'),
    ]);
  });

  it('captures DNS as the newest chart does, knows no proxy uid, and fails with Istio’s code', () => {
    expect(newest('chart-default', 'chart:dnsCapture')).toBe('true');
    expect(spec.dnsCapture).toEqual({ servers: [] });
    expect(spec.proxyUids).toEqual([]);
    expect(spec.proxyGids).toEqual([]);
    expect(spec.dataplane).toBe('ambient');
    expect(failureExitCode).toBe(PRESETS.istio.failureExitCode);
    expect(failureExitCode).toBe(126);
  });

  it('--mesh istio-ambient builds the preset; flags replace single fields', () => {
    expect(specFromFlags(['--mesh=istio-ambient'])).toEqual(spec);
    const read = parseCommandLine(
      'explain',
      ['--mesh=istio-ambient', '--host-probe-addresses=10.9.8.7'],
      { INTERLOCK_DNS_CAPTURE: 'false' },
      INTERCEPTION_FLAGS,
    );
    if (!read.ok) throw new Error(read.error.message);
    const built = buildInterceptionSpec(read.value);
    if (!built.ok) throw new Error(built.error.message);
    const off = built.value;
    expect(off.dnsCapture).toBeUndefined();
    expect(off.hostProbeAddresses.map(formatIp)).toEqual(['10.9.8.7']);
  });

  it('the sidecar presets keep the sidecar dataplane and no marks', () => {
    for (const mesh of ['linkerd', 'istio', 'generic'] as const) {
      expect(PRESETS[mesh].spec.dataplane).toBe('sidecar');
      expect(PRESETS[mesh].spec.proxyMarks).toEqual([]);
      expect(PRESETS[mesh].spec.markRoute).toBeUndefined();
    }
  });
});
