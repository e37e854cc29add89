import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { meshIdentity } from '../../src/mesh/meshes.js';
import { collect, usePods, verdictLine } from '../harness/pod-namespace.js';

/**
 * kuma-validation's argv as Kuma's injector renders it (inject.34), run by Interlock's drop-in as
 * the image's /usr/bin/kumactl shim runs it (`interlock kumactl ...`), as uid/gid 5678 without
 * capabilities, in a pod namespace routed into a sink: Kuma's own rules (its 2.14.3 golden) pass,
 * no rules fail with Kuma's failure code.
 */
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/meshes/kuma/2.14.3');
type Json = Record<string, ReturnType<typeof JSON.parse>>;
const pod = usePods(afterEach);
const kuma = meshIdentity('kuma');

function renderedArgv(): { argv: string[]; uid: number; gid: number } {
  const golden = parseYaml(readFileSync(path.join(FIXTURES, 'injector/inject.34.golden.yaml'), 'utf8')) as Json;
  const container = (golden.spec.initContainers as Json[]).find((c) => c.name === kuma.containers.validator) as Json;
  expect(container.command).toEqual(kuma.dropIn?.command);
  // The injector's defaults (dual stack, 15006) in place of the golden's annotated 15055.
  const args = (container.args as string[]).map((arg) =>
    arg.startsWith('--validation-server-port=') ? `--validation-server-port=${kuma.capture.inboundPort}` : arg,
  );
  const { runAsUser, runAsGroup } = container.securityContext as { runAsUser: number; runAsGroup: number };
  return { argv: ['kumactl', ...(container.command as string[]).slice(1), ...args], uid: runAsUser, gid: runAsGroup };
}

function goldenRules(): string {
  return readFileSync(path.join(FIXTURES, 'transparentproxy/debian-12-default.iptables-nft.golden'), 'utf8').replaceAll(
    'ifPlaceholder',
    'lo',
  );
}

describe('the kumactl drop-in validates a pod as Kuma renders kuma-validation', () => {
  it("passes with Kuma's own rules", async () => {
    const ns = pod();
    ns.applyRulesText(goldenRules(), 'nft');
    const { argv, uid, gid } = renderedArgv();
    const result = await collect(
      ns.spawnInterlock(argv, { uid, gid, env: { INTERLOCK_TERMINATION_LOG: ns.terminationLog } }),
      ns.terminationLog,
    );
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
    expect(verdictLine(result.terminationMessage)).toMatch(/^Intercepted: /);
  });

  it("fails with Kuma's failure code when kuma-cni wrote nothing", async () => {
    const ns = pod();
    const { argv, uid, gid } = renderedArgv();
    const result = await collect(
      ns.spawnInterlock(argv, { uid, gid, env: { INTERLOCK_TERMINATION_LOG: ns.terminationLog } }),
      ns.terminationLog,
    );
    expect(result.exitCode, result.stdout + result.stderr).toBe(kuma.failureExitCode);
    expect(verdictLine(result.terminationMessage)).toMatch(/^InterceptionMissing: /);
  });
});
