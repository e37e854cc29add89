import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, corpusFile, verdictLine, usePods, type InterlockRun } from '../harness/pod-namespace.js';
import { asIstioValidation, meshValidatorCases, type MeshValidatorCase } from './mesh-fixtures.js';

/**
 * The conformance suite: every validator container the meshes render (test/fixtures/meshes), run
 * as rendered (command, args, env, uid and gid, no capabilities) in a pod namespace holding the
 * rules that mesh's CNI plugin writes for that pod; then with the rules missing; then partial.
 * Cases whose rendered inputs are identical run once, and every fixture is mapped to one.
 */
const pod = usePods(afterEach);
/** A guard for a starved machine, not a timed assertion: each run has its own 10 s deadline. */
const GUARD = { timeout: 240_000 };

const corpus = (dir: string) => readFileSync(corpusFile(dir, 'iptables-nft-save.v4.txt'), 'utf8');

/** linkerd-cni adds the API server's ports (fallback 443, 6443) to a control-plane pod's outbound skips, as proxy-init writes them. */
function linkerdControlPlane(rules: string): string {
  const skip =
    '-A PROXY_INIT_OUTPUT -p tcp -m multiport --dports 443,6443 -m comment --comment "proxy-init/ignore-port-443,6443" -j RETURN\n';
  const out = rules.replace(
    /^(-A PROXY_INIT_OUTPUT -p tcp -m comment --comment "proxy-init\/redirect-all)/m,
    `${skip}$1`,
  );
  expect(out).not.toBe(rules);
  return out;
}

/** istio-cni writes the proxy container's runAsUser/runAsGroup as the owners it spares. */
function istioOwners(rules: string, uid: number, gid: number): string {
  return rules.replace(/--uid-owner 1337/g, `--uid-owner ${uid}`).replace(/--gid-owner 1337/g, `--gid-owner ${gid}`);
}

interface Scenario {
  readonly key: string;
  readonly sample: MeshValidatorCase;
  readonly argv: readonly string[];
  readonly rules: string;
  /** A rule that spares a path the configuration requires captured, first in the mesh's output chain. */
  readonly partial: string;
  readonly failureCode: number;
}

function scenarioOf(testCase: MeshValidatorCase): Scenario {
  if (testCase.mesh === 'linkerd') {
    const [, ...args] = testCase.argv;
    const controlPlane = Boolean(testCase.labels['linkerd.io/control-plane-component']);
    const base = corpus('linkerd/cni-default');
    const rules = controlPlane ? linkerdControlPlane(base) : base;
    return {
      key: JSON.stringify(['linkerd', controlPlane, testCase.argv, testCase.env, testCase.uid, testCase.gid]),
      sample: testCase,
      // Linkerd's command path is the image's shim, which passes this name first.
      argv: ['linkerd2-network-validator', ...args],
      rules,
      partial: rules.replace(
        /^(-A PROXY_INIT_OUTPUT )/m,
        '-A PROXY_INIT_OUTPUT -p tcp -m tcp --dport 20001 -j RETURN\n$1',
      ),
      failureCode: 95,
    };
  }
  const argv = ['validate', ...asIstioValidation(testCase)];
  const tproxy = argv.includes('TPROXY');
  const base = corpus(tproxy ? 'istio-cni/tproxy' : 'istio-cni/basic');
  const rules = istioOwners(base, testCase.uid, testCase.gid);
  return {
    key: JSON.stringify(['istio', tproxy, argv, testCase.env, testCase.uid, testCase.gid]),
    sample: testCase,
    argv,
    rules,
    // Istio's argv carries its exclusions, so the probe spreads: a RETURN for 443 must be caught.
    partial: rules.replace(/^(-A ISTIO_OUTPUT )/m, '-A ISTIO_OUTPUT -p tcp -m tcp --dport 443 -j RETURN\n$1'),
    failureCode: 126,
  };
}

// The suite covers the CNI-mode validators the meshes render; istio-init goldens (no CNI) are
// covered by the argv suite (drop-in-argv.test.ts), which reads the same template lines.
const cniCases = meshValidatorCases().filter((testCase) => !testCase.fromIstioInit);
const scenarios = new Map<string, Scenario>();
for (const testCase of cniCases) {
  const scenario = scenarioOf(testCase);
  if (!scenarios.has(scenario.key)) scenarios.set(scenario.key, scenario);
}

/** A downward-API file as the kubelet writes it: sorted `key="value"` lines. */
function downwardFile(file: string, entries: Readonly<Record<string, string>>): string {
  const lines = Object.keys(entries)
    .sort()
    .map((key) => `${key}=${JSON.stringify(entries[key])}\n`);
  writeFileSync(file, lines.join(''));
  return file;
}

/**
 * Without capabilities: exactly as rendered. With the rules check: as `manifest --rules-check` and
 * the admission webhook run it (uid 0 with NET_ADMIN and NET_RAW; the legacy table list is
 * root-only), the pod's metadata mounted as downward-API files, the rules required.
 */
function run(scenario: Scenario, rules: string | undefined, caps: boolean): Promise<InterlockRun> {
  const ns = pod({ sink: 'reject' });
  if (rules !== undefined) ns.applyRulesText(rules, 'nft');
  const env: Record<string, string> = { ...scenario.sample.env, INTERLOCK_TERMINATION_LOG: ns.terminationLog };
  if (caps) {
    env.INTERLOCK_RULES = 'required';
    env.INTERLOCK_POD_ANNOTATIONS = downwardFile(path.join(ns.tmp, 'annotations'), scenario.sample.annotations);
    env.INTERLOCK_POD_LABELS = downwardFile(path.join(ns.tmp, 'labels'), scenario.sample.labels);
    // Run as root, the pod's own proxy group is no longer the process's: the injector records it.
    if (scenario.sample.mesh === 'istio') env.INTERLOCK_PROXY_GID = String(scenario.sample.gid);
  }
  const identity = caps ? { uid: 0, gid: 0 } : { uid: scenario.sample.uid, gid: scenario.sample.gid };
  return collect(ns.spawnInterlock(scenario.argv, { ...identity, caps, env }), ns.terminationLog);
}

describe('conformance: the meshes rendered validators, in a pod with their CNI rules', () => {
  it('covers both meshes, every version, the workload and control-plane, custom uid, OpenShift and TPROXY cases', () => {
    const mapped = cniCases.filter((testCase) => scenarios.has(scenarioOf(testCase).key));
    expect(mapped.length).toBe(cniCases.length);
    expect(new Set(cniCases.map((testCase) => testCase.tag)).size).toBeGreaterThanOrEqual(13);
    expect(scenarios.size).toBe(6);
  });

  for (const scenario of scenarios.values()) {
    const name = `${scenario.sample.mesh} ${scenario.sample.fixtureCase} uid ${scenario.sample.uid}`;
    const covered = cniCases.filter((testCase) => scenarioOf(testCase).key === scenario.key).length;
    describe(`${name} (${covered} fixtures)`, () => {
      for (const caps of [false, true]) {
        const mode = caps ? 'with the rules check' : 'without capabilities';
        it(`${mode}: exit 0 with the CNI's rules`, GUARD, async () => {
          const result = await run(scenario, scenario.rules, caps);
          expect(result.exitCode, result.stdout + result.stderr).toBe(0);
          expect(verdictLine(result.terminationMessage)).toMatch(/^Intercepted: /);
        });

        it(`${mode}: the mesh's failure code and reason with the rules missing`, GUARD, async () => {
          const result = await run(scenario, undefined, caps);
          expect(result.exitCode, result.stdout + result.stderr).toBe(scenario.failureCode);
          expect(verdictLine(result.terminationMessage)).toMatch(caps ? /^RulesMismatch: / : /^InterceptionMissing: /);
        });

        it(`${mode}: the failure code with the rules partial`, GUARD, async () => {
          const result = await run(scenario, scenario.partial, caps);
          expect(result.exitCode, result.stdout + result.stderr).toBe(scenario.failureCode);
        });
      }
    });
  }
});
