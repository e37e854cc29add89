import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { portSetHas } from '../../src/addr/port-set.js';
import { validateConfigWithPodMetadata } from '../../src/cli/commands/validate/pod-metadata-files.js';
import { parseDownwardApiFile } from '../../src/config/downward-api.js';
import { parseCommandLine } from '../../src/config/parse-command-line.js';
import { VALIDATE_FLAGS } from '../../src/config/validate-config.js';

const dir = mkdtempSync(path.join(tmpdir(), 'interlock-podinfo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** A downward-API file as the kubelet writes it: sorted `key="value"` lines, values Go-quoted. */
function downwardFile(entries: Record<string, string>): string {
  const file = path.join(dir, `f${++files}`);
  const lines = Object.keys(entries)
    .sort()
    .map((key) => `${key}=${JSON.stringify(entries[key])}`);
  writeFileSync(file, lines.join('\n'));
  return file;
}

function configFor(argv: string[]) {
  const parsed = parseCommandLine('validate', argv, {}, VALIDATE_FLAGS);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return validateConfigWithPodMetadata(parsed.value);
}

function built(argv: string[]) {
  const result = configFor(argv);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

describe('the probe spreads only over known exclusions', () => {
  it('Linkerd with nothing known: no spread (the pod may skip 443 by an annotation the validator cannot see)', () => {
    expect(built(['--mesh', 'linkerd']).probeSpread).toBe(false);
    expect(built(['--mesh', 'istio']).probeSpread).toBe(false);
    expect(built(['--mesh', 'linkerd', '--exclude-outbound-ports', '']).probeSpread).toBe(true);
  });

  it("Linkerd: the pod's skip-outbound-ports, with its labels, makes them known, as linkerd-cni applies them", () => {
    const annotations = downwardFile({
      'config.linkerd.io/skip-outbound-ports': '3306,5432',
      'config.linkerd.io/proxy-uid': '2103',
    });
    const labels = downwardFile({ app: 'web' });
    const config = built(['--mesh', 'linkerd', '--pod-annotations', annotations, '--pod-labels', labels]);
    expect(config.probeSpread).toBe(true);
    expect([3306, 5432, 443].map((port) => portSetHas(config.interception.excludeOutboundPorts, port))).toEqual([
      true,
      true,
      false,
    ]);
    expect(config.interception.proxyUids).toEqual([2103]);
    // Without the labels it could be a control-plane pod, which also skips the API server's ports.
    expect(built(['--mesh', 'linkerd', '--pod-annotations', annotations]).probeSpread).toBe(false);
  });

  it("Linkerd control-plane pods: 443 and 6443 skipped, and the API server's own port unknown", () => {
    const annotations = downwardFile({ 'config.linkerd.io/skip-outbound-ports': '4567,4568' });
    const labels = downwardFile({ 'linkerd.io/control-plane-component': 'destination' });
    const config = built(['--mesh', 'linkerd', '--pod-annotations', annotations, '--pod-labels', labels]);
    expect(config.probeSpread).toBe(false);
    expect([443, 6443, 4567].every((port) => portSetHas(config.interception.excludeOutboundPorts, port))).toBe(true);
  });

  it('Linkerd without the annotation on the pod: unknown (the namespace or the plugin config may set it)', () => {
    const annotations = downwardFile({ 'linkerd.io/inject': 'enabled' });
    const labels = downwardFile({ app: 'web' });
    const config = built(['--mesh', 'linkerd', '--pod-annotations', annotations, '--pod-labels', labels]);
    expect(config.probeSpread).toBe(false);
    expect(config.probeSpreadWhy).toMatch(/no config\.linkerd\.io\/skip-outbound-ports/);
  });

  it("Istio: the pod's annotations are all istio-cni reads, so they make the exclusions known", () => {
    const annotations = downwardFile({
      'traffic.sidecar.istio.io/excludeOutboundPorts': '3306',
      'traffic.sidecar.istio.io/includeOutboundIPRanges': '10.0.0.0/8',
    });
    const config = built(['--mesh', 'istio', '--pod-annotations', annotations]);
    expect(config.probeSpread).toBe(true);
    expect(portSetHas(config.interception.excludeOutboundPorts, 3306)).toBe(true);
    expect(portSetHas(config.interception.excludeOutboundPorts, 15020)).toBe(false);
    expect(config.interception.includeOutboundCidrs).toMatchObject({ kind: 'list' });
    const bad = downwardFile({ 'traffic.sidecar.istio.io/excludeOutboundPorts': 'mysql' });
    expect(built(['--mesh', 'istio', '--pod-annotations', bad]).probeSpread).toBe(false);
  });

  it('a file named but missing, not regular, or not in the downward-API format is a configuration error', () => {
    for (const file of [path.join(dir, 'missing'), dir, '/dev/zero']) {
      const result = configFor(['--mesh', 'linkerd', '--pod-annotations', file]);
      expect(!result.ok && result.error.message, file).toContain('--pod-annotations');
    }
    const garbled = path.join(dir, 'garbled');
    writeFileSync(garbled, 'a="b"\nnot a line\n');
    const result = configFor(['--mesh', 'linkerd', '--pod-labels', garbled]);
    expect(!result.ok && result.error.message).toMatch(/--pod-labels ".*garbled": line 2 is not key="value"/);
  });
});

describe('the downward-API file format', () => {
  it('reads Go-quoted values', () => {
    const parsed = parseDownwardApiFile('a.b/c="x\\"y\\\\z"\nk="\\u00e9\\t\\x41"\nempty=""\n');
    expect(parsed.ok && [...parsed.value]).toEqual([
      ['a.b/c', 'x"y\\z'],
      ['k', 'é\tA'],
      ['empty', ''],
    ]);
    for (const bad of ['a=b', 'a="b', '="b"', 'a="b"c"', 'a="\\q"'])
      expect(parseDownwardApiFile(bad).ok, bad).toBe(false);
  });
});
