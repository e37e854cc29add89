import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeAuthority, type Authority } from '../../test/harness/certs.js';
import { applyServingSecret, webhookAuthority } from './install.js';
import { IMAGE, interlock, interlockObjects, kubectl, STATE, waitFor } from './cluster.js';

// The manifest path's uninstall, as docs/operator.md prints it: the node agent, the webhook (its
// CA given) and the Event RBAC of a namespace the operator owns, applied as printed; then the
// documented block, which reads only the install records, removes every object with Interlock's
// labels, cluster-scoped ones included, and nothing of the operator's namespace.
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const APP_NS = 'ilk-install-record';
const WEBHOOK_NS = 'interlock-webhook';

/** The ```sh block under docs/operator.md's **Uninstall without the flags.** paragraph. */
function documentedUninstall(): string {
  const doc = readFileSync(join(REPO, 'docs/operator.md'), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('**Uninstall without the flags.**')))?.[1];
  if (!block) throw new Error('docs/operator.md: no sh block under **Uninstall without the flags.**');
  return block;
}

function bash(script: string): Promise<{ code: number; out: string }> {
  const kubectlDir = dirname(join(readFileSync(join(STATE, 'bin'), 'utf8').trim(), 'kubectl'));
  const env = {
    ...process.env,
    KUBECONFIG: join(STATE, 'admin.kubeconfig'),
    PATH: `${kubectlDir}:${process.env['PATH']}`,
  };
  return new Promise((resolve) =>
    execFile('bash', ['-euo', 'pipefail', '-c', script], { env, timeout: 200_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: stdout + stderr }),
    ),
  );
}

let authority: Authority;

beforeAll(async () => {
  // A file before this one may have removed its Interlock with --wait=false: its Namespace may still be going.
  await waitFor('no Interlock object left by an earlier file', async () => (await interlockObjects()) === '', 180_000);
  authority = webhookAuthority('cluster-install-record');
  await kubectl(['delete', 'namespace', APP_NS, '--ignore-not-found', '--wait=true', '--timeout=110s']);
  await kubectl(['create', 'namespace', APP_NS]);
}, 300_000);
afterAll(async () => {
  await kubectl(['delete', 'namespace', APP_NS, '--ignore-not-found', '--wait=false']).catch(() => undefined);
  if (authority) removeAuthority(authority);
});

describe("manifest's install records, and the documented uninstall that reads them", () => {
  it('installs the agent, the webhook and the Event RBAC, each with its record', async () => {
    const ca = join(authority.dir, 'ca.crt');
    for (const argv of [
      ['--node-agent', '--mesh', 'linkerd', '--image', IMAGE],
      ['--webhook', '--ca-bundle', ca, '--image', IMAGE, '--api-server-cidr', '10.231.0.2/32'],
      ['--rbac', '--namespace', APP_NS],
    ])
      await kubectl(['apply', '-f', '-'], await interlock(['manifest', ...argv]));
    await applyServingSecret(authority);
    await kubectl(['rollout', 'status', 'deployment/interlock-webhook', '-n', WEBHOOK_NS, '--timeout=110s']);
    await kubectl([
      'rollout',
      'status',
      'daemonset/interlock-node-linkerd',
      '-n',
      'interlock-system',
      '--timeout=110s',
    ]);
    const records = await kubectl([
      'get',
      'configmap',
      '-A',
      '-l',
      'app.kubernetes.io/name=interlock-install',
      '-o',
      'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\\n"}{end}',
    ]);
    expect(records.trim().split('\n').sort()).toEqual([
      `${APP_NS}/interlock-install-validator-events`,
      'interlock-system/interlock-install-node-agent-linkerd',
      `${WEBHOOK_NS}/interlock-install-webhook`,
    ]);
  });

  it("the documented uninstall leaves no object with Interlock's labels, and the operator's namespace", async () => {
    const ran = await bash(documentedUninstall());
    expect(ran.code, ran.out).toBe(0);
    expect(ran.out).toMatch(/clusterrole.rbac.authorization.k8s.io "interlock-node-linkerd" deleted/);
    expect(ran.out).toMatch(/mutatingwebhookconfiguration.admissionregistration.k8s.io "zz-interlock-webhook" deleted/);
    expect(ran.out).toMatch(new RegExp(`role.rbac.authorization.k8s.io "interlock-events" deleted`));
    await waitFor('the namespaces to go', async () => (await interlockObjects()) === '', 120_000).catch(
      () => undefined,
    );
    expect(await interlockObjects()).toBe('');
    expect(await kubectl(['get', 'namespace', APP_NS, '-o', 'jsonpath={.status.phase}'])).toBe('Active');
  });
});
