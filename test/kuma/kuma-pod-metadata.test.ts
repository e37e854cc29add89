import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { portSetHas } from '../../src/addr/port-set.js';
import { validateConfigWithPodMetadata } from '../../src/cli/commands/validate/pod-metadata-files.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';
import { VALIDATE_FLAGS } from '../../src/config/validate-config.js';
import { expectationOf } from '../../src/node-agent/recheck/expectations.js';
import { namespaceMetaOf, recheckPodOf } from '../../src/node-agent/recheck/meshed-pod.js';

/**
 * Kuma's traffic annotations, read as kuma-cni reads them (legacy path, v2.14.3), by validate with
 * --pod-annotations and by the node agent's re-check. The annotations are those of Kuma's own
 * injector golden inject.34 (pinned in test/fixtures/meshes/sources.json): inbound port 15055.
 */
const GOLDEN = path.resolve(import.meta.dirname, '../fixtures/meshes/kuma/2.14.3/injector/inject.34.golden.yaml');
const injected = parse(readFileSync(GOLDEN, 'utf8')) as { metadata: { annotations: Record<string, string> } };
const dir = mkdtempSync(path.join(tmpdir(), 'interlock-kuma-podinfo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function config(annotations: Record<string, string>) {
  const file = path.join(dir, `a${++files}`);
  writeFileSync(
    file,
    Object.entries(annotations)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join('\n'),
  );
  const parsed = parseCommandLine('validate', ['--mesh', 'kuma', '--pod-annotations', file], {}, VALIDATE_FLAGS);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const result = validateConfigWithPodMetadata(parsed.value);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

describe("Kuma's traffic annotations, as kuma-cni reads them", () => {
  it("takes the injector's inbound port and uid, and kuma-cni's 9901 defaults", () => {
    const found = config(injected.metadata.annotations);
    expect(injected.metadata.annotations['kuma.io/transparent-proxying-inbound-port']).toBe('15055');
    expect(found.interception.inboundPort).toBe(15055);
    expect(found.interception.proxyUids).toEqual([5678]);
    expect(portSetHas(found.interception.excludeOutboundPorts, 9901)).toBe(true);
    // application-probe-proxy-port "0": nothing added to the inbound exclusions.
    expect(portSetHas(found.interception.excludeInboundPorts, 9001)).toBe(false);
    expect(found.probeSpread).toBe(true);
  });

  it('reads the exclusions and DNS, and refuses what kuma-cni refuses', () => {
    const found = config({
      'traffic.kuma.io/exclude-outbound-ports': '3306',
      'traffic.kuma.io/exclude-outbound-ips': '10.1.0.0/16',
      'kuma.io/builtin-dns': 'enabled',
      'kuma.io/builtin-dns-port': '15054',
    });
    expect(portSetHas(found.interception.excludeOutboundPorts, 3306)).toBe(true);
    expect(portSetHas(found.interception.excludeOutboundPorts, 9901)).toBe(false);
    expect(portSetHas(found.interception.excludeInboundPorts, 9001)).toBe(true);
    expect(found.interception.excludeOutboundCidrs).toHaveLength(1);
    expect(found.interception.dnsCapture).toEqual({ servers: [] });
    expect(found.interception.dnsPort).toBe(15054);
    const refusals: Record<string, string>[] = [
      { 'traffic.kuma.io/exclude-outbound-ports': '' },
      { 'kuma.io/transparent-proxying-inbound-port': 'http' },
      { 'traffic.kuma.io/transparent-proxy-config': 'kumaDPUser: "5678"' },
      { 'kuma.io/transparent-proxying-ebpf': 'enabled' },
      { 'traffic.kuma.io/exclude-outbound-ports-for-uids': '0:80' },
    ];
    for (const bad of refusals) {
      const refused = config(bad);
      expect(refused.probeSpread, JSON.stringify(bad)).toBe(false);
      expect(refused.interception.inboundPort).toBe(15006);
    }
  });

  it("lets the re-check expect a Kuma pod's own inbound port", () => {
    const pod = recheckPodOf({
      metadata: {
        name: 'p',
        namespace: 'n',
        uid: 'u',
        resourceVersion: '1',
        annotations: injected.metadata.annotations,
      },
      spec: { nodeName: 'node', initContainers: [{ name: 'kuma-validation' }], containers: [{ name: 'app' }] },
      status: { phase: 'Running', podIPs: [{ ip: '10.0.0.5' }] },
    });
    if (!pod) throw new Error('no pod');
    const found = expectationOf('kuma', pod, namespaceMetaOf({}));
    if (found.kind !== 'spec') throw new Error(found.why);
    expect(found.specs[0]?.inboundPort).toBe(15055);
  });
});
