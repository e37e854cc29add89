import { afterEach, describe, expect, it } from 'vitest';
import { collect, corpusFile, verdictLine, usePods, type PodNamespace } from '../harness/pod-namespace.js';
import { istioValidationArgs } from '../meshes/mesh-fixtures.js';

const pod = usePods(afterEach);

/** What Linkerd's injector passes after its command path, as its chart renders it on every release. */
const LINKERD = [
  'linkerd2-network-validator',
  '--log-format',
  'json',
  '--log-level',
  'debug',
  '--connect-addr',
  '1.1.1.1:20001',
  '--listen-addr',
  '0.0.0.0:4140',
  '--timeout',
  '5s',
];
/**
 * Istio's istio-validation args as rendered (test/fixtures/meshes), after the image's `interlock
 * validate` entrypoint (the snapshot launcher runs the same argv), with JSON logs and a short probe
 * timeout added as an operator may.
 */
const ISTIO = ['validate', ...istioValidationArgs(), '--log_as_json', '--probe-timeout', '5s'];

function run(ns: PodNamespace, argv: string[], uid: number) {
  // The mesh's argv carries no termination-log flag; the path comes from the environment, as a pod's would.
  return collect(
    ns.spawnInterlock(argv, { uid, env: { INTERLOCK_TERMINATION_LOG: ns.terminationLog } }),
    ns.terminationLog,
  );
}

describe("drop-in: Linkerd's validator argv, as uid 65534 with no capabilities", () => {
  it("passes with Linkerd's CNI rules", async () => {
    const ns = pod();
    ns.applyRules(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'nft');
    const result = await run(ns, LINKERD, 65534);
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
    expect(verdictLine(result.terminationMessage)).toMatch(/^Intercepted: .* into port 4140/);
  });

  it("fails with Linkerd's exit code 95 without them", async () => {
    const ns = pod();
    const result = await run(ns, LINKERD, 65534);
    expect(result.exitCode).toBe(95);
    expect(verdictLine(result.terminationMessage)).toMatch(/^InterceptionMissing: .* port 4140/);
  });

  it('a listen port the rules do not redirect to fails: the listen port is the outbound port', async () => {
    const ns = pod();
    ns.applyRules(corpusFile('linkerd/cni-default', 'iptables-nft-save.v4.txt'), 'nft');
    const result = await run(
      ns,
      LINKERD.map((arg) => (arg === '0.0.0.0:4140' ? '0.0.0.0:4999' : arg)),
      65534,
    );
    expect(result.exitCode).toBe(95);
    expect(verdictLine(result.terminationMessage)).toMatch(/port 4999/);
  });
});

describe("drop-in: Istio's istio-validation args, as uid 1337 with no capabilities", () => {
  it("passes with Istio's CNI rules", async () => {
    const ns = pod();
    ns.applyRules(corpusFile('istio-cni/basic', 'iptables-nft-save.v4.txt'), 'nft');
    const result = await run(ns, ISTIO, 1337);
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
    expect(verdictLine(result.terminationMessage)).toMatch(/^Intercepted: /);
  });

  it("fails with Istio's exit code 126 without them", async () => {
    const ns = pod();
    const result = await run(ns, ISTIO, 1337);
    expect(result.exitCode).toBe(126);
    expect(verdictLine(result.terminationMessage)).toMatch(/^InterceptionMissing: /);
  });

  it('refuses to write rules and names an unknown option, exit 64, before probing anything', async () => {
    const ns = pod();
    const writes = await run(
      ns,
      ISTIO.filter((arg) => arg !== '--run-validation'),
      1337,
    );
    expect(writes.exitCode).toBe(64);
    expect(writes.stderr).toMatch(/never writes rules/);
    const unknown = await run(ns, [...ISTIO, '--exclude-interfaces', 'eth9'], 1337);
    expect(unknown.exitCode).toBe(64);
    expect(unknown.stderr).toMatch(/"--exclude-interfaces"/);
  });
});
