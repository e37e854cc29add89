import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ISTIO_AMBIENT_POD_ANNOTATIONS as NAMES } from '../../src/mesh/istio-ambient.js';
import { ambientGolden, goldenHostProbes } from '../harness/ambient-goldens.js';
import { applyAmbientRules, startZtunnel } from '../harness/ambient-rules.js';
import { usePods } from '../harness/pod-namespace.js';

// Issue #44, item 5, as reproduced: istio-cni's rules for a pod annotated
// ambient.istio.io/bypass-inbound-capture (the 1.29.0 `ingress` golden) failed
// `validate --mesh istio-ambient --rules required` with RulesMismatch (126). With the pod's
// annotations file (the podinfo downward-API file) they pass; without it they still fail.
const pod = usePods(afterEach);
const children: ChildProcess[] = [];
afterEach(() => {
  while (children.length) children.pop()?.kill();
});
const dir = mkdtempSync(path.join(tmpdir(), 'interlock-ambient-podinfo-'));
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('validate reads the ambient pod’s bypass-inbound-capture annotation', () => {
  it('1.29.0 ingress rules: 126 RulesMismatch without the annotations, 0 with them', async () => {
    const file = path.join(dir, 'annotations');
    writeFileSync(file, `${NAMES.bypassInboundCapture}="true"\n`, { mode: 0o644 });
    const ns = pod();
    applyAmbientRules(ns, { tag: '1.29.0', name: 'ingress' });
    children.push(await startZtunnel(ns, { family: 'dual' }));
    const probes = goldenHostProbes(ambientGolden('1.29.0', 'iptables', 'ingress')).join(',');
    const args = [
      '--mesh',
      'istio-ambient',
      '--timeout',
      '3s',
      '--rules',
      'required',
      '--host-probe-addresses',
      probes,
    ];
    const env = { INTERLOCK_DNS_CAPTURE: 'false' };
    const without = await ns.runInterlock(args, { caps: true, env });
    expect(without.exitCode, without.terminationMessage).toBe(126);
    expect(without.terminationMessage).toMatch(/^RulesMismatch: /);
    const withIt = await ns.runInterlock([...args, '--pod-annotations', file], { caps: true, env });
    expect(withIt.exitCode, `${withIt.terminationMessage}\n${withIt.stderr}`).toBe(0);
  });
});
