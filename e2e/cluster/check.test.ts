import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAuthority, removeAuthority, type Authority } from '../../test/harness/certs.js';
import { freshNamespace, interlockRun, kubectl, waitFor } from './cluster.js';
import { installAgent, installWebhook, NODE_NS, WEBHOOK_NS, type InstalledWebhook } from './install.js';

// `interlock check` against the real API server: the webhook, the node agent and the Event RBAC
// installed as docs/operator.md prints them pass; then each breakage an operator meets is made to
// the real cluster, `check` exits 69 and its FAIL line names that breakage, and the object is put
// back as printed (and `check` passes again) before the next.
const NS = 'ilk-check';
const CHECK_FAILED = 69;

let webhook: InstalledWebhook;
let agent: string;
let stranger: Authority;
/** What was applied, to delete after the file whatever happened. */
const applied: string[] = [];

const check = () => interlockRun(['check']);

/** `check` until it fails with `line` among its FAIL lines (the cluster's controllers take a moment). */
async function failsWith(line: RegExp): Promise<string> {
  return waitFor(
    `check to fail with ${String(line)}`,
    async () => {
      const ran = await check();
      const fails = ran.stdout.split('\n').filter((text) => text.startsWith('  FAIL  '));
      return ran.exitCode === CHECK_FAILED && fails.some((text) => line.test(text)) ? ran.stdout : undefined;
    },
    120_000,
  );
}

async function passes(): Promise<string> {
  return waitFor(
    'check to pass',
    async () => {
      const ran = await check();
      return ran.exitCode === 0 ? ran.stdout : undefined;
    },
    180_000,
  );
}

/** Puts back a part as printed: `kubectl apply` of the same output recreates what was removed. */
const reapply = async (printed: string) => kubectl(['apply', '-f', '-'], printed);

beforeAll(async () => {
  webhook = await installWebhook('cluster-check');
  applied.push(webhook.printed);
  agent = await installAgent();
  applied.push(agent);
  await freshNamespace(NS);
  stranger = makeAuthority('cluster-check-stranger');
}, 420_000);
afterAll(async () => {
  await kubectl(['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
  // Waited for: the next file may install the same parts, and a terminating namespace refuses them.
  for (const printed of applied)
    await kubectl(['delete', '-f', '-', '--wait=true', '--timeout=120s'], printed).catch(() => undefined);
  if (webhook) removeAuthority(webhook.authority);
  if (stranger) removeAuthority(stranger);
}, 300_000);

describe('interlock check, against a real cluster', () => {
  it('passes on the healthy install (exit 0, no FAIL line)', async () => {
    const out = await passes();
    expect(out).not.toContain('FAIL');
    expect(out).toMatch(/ok {4}reached https:\/\/10\.231\.0\.2:6443, Kubernetes v1\.33\.13/);
    expect(out).toMatch(new RegExp(`ok {4}Service ${WEBHOOK_NS}/interlock-webhook has [1-9] ready endpoints?\n`));
    expect(out).toContain('ok    a ready agent runs on each of the 1 nodes');
  });

  it('names the webhook Service that was deleted', async () => {
    try {
      await kubectl(['delete', 'service', 'interlock-webhook', '-n', WEBHOOK_NS]);
      const out = await failsWith(
        /^ {2}FAIL {2}Service interlock-webhook\/interlock-webhook does not exist: the API server cannot reach the webhook$/,
      );
      expect(out).toMatch(/FAIL {2}Service interlock-webhook\/interlock-webhook has no ready endpoint/);
    } finally {
      await reapply(webhook.printed);
    }
    await passes();
  });

  it('names the agent DaemonSet that no node can run (a nodeSelector nothing matches)', async () => {
    const patch = JSON.stringify({
      spec: { template: { spec: { nodeSelector: { 'interlock.dev/no-such': 'node' } } } },
    });
    try {
      await kubectl(['patch', 'daemonset', 'interlock-node', '-n', NODE_NS, '--type=merge', '-p', patch]);
      const out = await failsWith(/^ {2}FAIL {2}no ready agent on 1 of 1 nodes: interlock-node; /);
      expect(out).toMatch(/FAIL {2}DaemonSet interlock-system\/interlock-node: 0 of 0 scheduled pods ready/);
    } finally {
      // The printed DaemonSet has no nodeSelector: a merge patch removes the one added.
      await kubectl([
        ...['patch', 'daemonset', 'interlock-node', '-n', NODE_NS, '--type=merge'],
        ...['-p', JSON.stringify({ spec: { template: { spec: { nodeSelector: null } } } })],
      ]);
    }
    await passes();
  });

  it('names the verbs the agent lost with its ClusterRoleBinding', async () => {
    try {
      await kubectl(['delete', 'clusterrolebinding', 'interlock-node']);
      await failsWith(
        /^ {2}FAIL {2}ServiceAccount interlock-system\/interlock-node may not get pods, list pods, watch pods, delete pods, create events, which --action=delete needs$/,
      );
    } finally {
      await reapply(agent);
    }
    await passes();
  });

  it("names a caBundle that did not sign the webhook's serving certificate", async () => {
    const wrong = readFileSync(join(stranger.dir, 'ca.crt')).toString('base64');
    const patch = JSON.stringify([{ op: 'replace', path: '/webhooks/0/clientConfig/caBundle', value: wrong }]);
    try {
      await kubectl(['patch', 'mutatingwebhookconfiguration', 'zz-interlock-webhook', '--type=json', '-p', patch]);
      await failsWith(
        /^ {2}FAIL {2}the serving certificate in Secret interlock-webhook\/interlock-webhook-tls is not signed by the caBundle's CA: the API server refuses its TLS$/,
      );
    } finally {
      await reapply(webhook.printed);
    }
    await passes();
  });

  it('names the MutatingWebhookConfiguration that was deleted', async () => {
    try {
      await kubectl(['delete', 'mutatingwebhookconfiguration', 'zz-interlock-webhook']);
      await failsWith(
        /^ {2}FAIL {2}MutatingWebhookConfiguration zz-interlock-webhook does not exist, but other webhook objects do$/,
      );
    } finally {
      await reapply(webhook.printed);
    }
    await passes();
  });
});
