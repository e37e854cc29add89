import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { meshIdentity } from '../src/mesh/meshes.js';
import { runInterlock } from './harness/interlock.js';
import { Pod } from './harness/pod.js';

/**
 * The swap through Kuma's validation image: kuma-validation exactly as Kuma's injector renders it
 * (`command: [/usr/bin/kumactl, install, transparent-proxy-validator]`, its args, uid/gid 5678),
 * with Interlock's image in place of kuma-init's. The image's /usr/bin/kumactl shim runs the
 * drop-in: Kuma's own rules pass, a pod kuma-cni never reached fails with Kuma's code.
 */
const FIXTURES = path.resolve(import.meta.dirname, '../test/fixtures/meshes/kuma/2.14.3');
type Json = Record<string, ReturnType<typeof JSON.parse>>;
const kuma = meshIdentity('kuma');
const golden = parseYaml(readFileSync(path.join(FIXTURES, 'injector/inject.34.golden.yaml'), 'utf8')) as Json;
const rendered = (golden.spec.initContainers as Json[]).find((c) => c.name === kuma.containers.validator) as Json;
const { runAsUser, runAsGroup } = rendered.securityContext as { runAsUser: number; runAsGroup: number };
const security = { user: `${runAsUser}:${runAsGroup}`, addCapabilities: [] };
// The injector's default port (15006) in place of the golden's annotated 15055.
const args = (rendered.args as string[]).map((arg) =>
  arg.startsWith('--validation-server-port=') ? `--validation-server-port=${kuma.capture.inboundPort}` : arg,
);
const command = rendered.command as string[];

const pods: Pod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.destroy();
});

async function pod(): Promise<Pod> {
  const created = await Pod.create();
  pods.push(created);
  await created.runPrimaryCni();
  return created;
}

describe("Interlock's image as Kuma's validation image", () => {
  it("passes with Kuma's own rules", async () => {
    const meshed = await pod();
    const text = readFileSync(path.join(FIXTURES, 'transparentproxy/debian-12-default.iptables-nft.golden'), 'utf8');
    await meshed.runMeshCni({
      name: 'kuma 2.14.3 debian-12-default',
      family: 'ipv4',
      backend: 'nft',
      text: text.replaceAll('ifPlaceholder', 'lo'),
    });
    const result = await runInterlock(meshed, {
      security,
      entrypoint: command.slice(0, 1),
      args: [...command.slice(1), ...args],
    });
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
  });

  it("fails with Kuma's failure code when kuma-cni wrote nothing", async () => {
    const unmeshed = await pod();
    const result = await runInterlock(unmeshed, {
      security,
      entrypoint: command.slice(0, 1),
      args: [...command.slice(1), ...args],
    });
    expect(result.exitCode, result.stdout + result.stderr).toBe(kuma.failureExitCode);
  });
});
