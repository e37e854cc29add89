import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runExplain } from '../../src/cli/commands/explain/run.js';
import { ISTIO_AMBIENT_POD_ANNOTATIONS as NAMES } from '../../src/mesh/istio-ambient.js';
import { keepRules } from '../harness/ambient-goldens.js';
import { backendsOf, dumpGolden, makeNamespace, removeNamespace } from './dumps.js';
import { ambientGoldens, goldenFlags, type AmbientGolden } from './goldens.js';

// Issue #44, item 5: istio-cni's per-pod goldens (`ingress*`, `dns_pod_*`, `virtual_interfaces*`)
// are the rules of a pod carrying an annotation (GetCommonInPodTestCases, cni/pkg/iptables; the
// annotation names and where istio-cni reads them are pinned in facts/istio-ambient.json). Given
// the pod's annotations (`--pod-annotations`), the chart's settings alone, explain passes each;
// without them, or with the annotation's rules taken out, it fails.
const namespace = makeNamespace('amb-annot');
const scratch = mkdtempSync(path.join(tmpdir(), 'interlock-ambient-annot-'));
/** The mutants' dumps, under the golden's own name (its family is read from the name). */
const mutants = mkdtempSync(path.join(scratch, 'mutants-'));
afterAll(() => {
  removeNamespace(namespace);
  rmSync(scratch, { recursive: true, force: true });
});

const perPod = ambientGoldens().filter((golden) => /^(ingress|dns_pod_|virtual_interfaces)/.test(golden.name));

/** The pod annotations behind the upstream test case the golden is named for. */
function annotationsOf(golden: AmbientGolden): Record<string, string> {
  const out: Record<string, string> = {};
  if (golden.name.startsWith('ingress')) out[NAMES.bypassInboundCapture] = 'true';
  if (golden.name.includes('virtual_interfaces')) out[NAMES.rerouteVirtualInterfaces] = 'fake1s0f0, fake1s0f1';
  if (golden.name.startsWith('dns_pod_enabled')) out[NAMES.dnsCapture] = 'true';
  if (golden.name.startsWith('dns_pod_disabled')) out[NAMES.dnsCapture] = 'false';
  return out;
}

/** The chart's settings only: goldenFlags without what the annotations say, DNS capture as the chart's. */
function chartFlags(golden: AmbientGolden): string[] {
  return goldenFlags(golden).filter(
    (flag) => !flag.startsWith('--include-inbound-ports=') && !flag.startsWith('--reroute-interfaces='),
  );
}
const chartEnv = (golden: AmbientGolden): Record<string, string> => ({
  INTERLOCK_DNS_CAPTURE: golden.name.endsWith('on_globally') || golden.name.includes('on_globally_') ? 'true' : 'false',
});

function annotationsFile(golden: AmbientGolden, backend: string): string {
  const file = path.join(scratch, `${golden.tag}-${golden.backend}-${golden.name}-${backend}.annotations`);
  const lines = Object.entries(annotationsOf(golden)).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** The golden with the rules its annotation adds taken out (DNS to 15053, the rerouted interfaces). */
function withoutAnnotationRules(golden: AmbientGolden): AmbientGolden | undefined {
  const drop = golden.name.startsWith('dns_pod_enabled')
    ? (rule: string) => rule.includes('15053')
    : golden.name.includes('virtual_interfaces')
      ? (rule: string) => rule.includes('fake1s0f') && /REDIRECT|redirect/.test(rule)
      : undefined;
  return drop ? { ...golden, text: keepRules(golden.text, (rule) => !drop(rule)) } : undefined;
}

describe("explain --pod-annotations reads ambient pods' own annotations, as istio-cni does", () => {
  it('covers each per-pod golden of every tag that has them (1.24.0 on)', () => {
    expect(new Set(perPod.map((golden) => golden.tag)).size).toBe(7);
    expect(perPod.length).toBeGreaterThanOrEqual(7 * 2 + 6 * 8);
  });

  for (const golden of perPod) {
    for (const backend of backendsOf(golden)) {
      it(`${golden.tag} ${golden.backend}/${golden.name} (${backend}): passes with its annotations, fails without`, async () => {
        const dump = dumpGolden(namespace, golden, backend, scratch);
        const annotated = ['--pod-annotations', annotationsFile(golden, backend)];
        const pass = await runExplain([...chartFlags(golden), ...annotated, ...dump.files], chartEnv(golden));
        expect(pass.stderr).toBe('');
        expect(pass.stdout).toContain('PASSED');
        expect(pass.exitCode).toBe(0);
        const mutant = withoutAnnotationRules(golden);
        if (mutant) {
          // The annotation adds capture: the chart's expectation passes its rules, so the detector
          // is the annotated expectation against the rules without what the annotation adds.
          const broken = dumpGolden(namespace, mutant, backend, mutants);
          const fails = await runExplain([...chartFlags(golden), ...annotated, ...broken.files], chartEnv(golden));
          expect(fails.exitCode, fails.stdout + fails.stderr).toBe(126);
        } else {
          // The annotation takes capture away: the chart's expectation fails the golden.
          const fails = await runExplain([...chartFlags(golden), ...dump.files], chartEnv(golden));
          expect(fails.exitCode, fails.stdout + fails.stderr).toBe(126);
        }
      });
    }
  }
});
