import { join } from 'node:path';
import { makeAuthority, type Authority } from '../../test/harness/certs.js';
import { IMAGE, interlock, kubectl, waitFor } from './cluster.js';

/** Where `manifest --webhook` and `manifest --node-agent` put their parts by default. */
export const WEBHOOK_NS = 'interlock-webhook';
export const NODE_NS = 'interlock-system';

/**
 * Waits until `namespace` is not being deleted: an earlier file's cleanup (`--wait=false`) may
 * still be removing the part, and the API server refuses new objects in a terminating namespace.
 */
async function notTerminating(namespace: string): Promise<void> {
  await waitFor(
    `namespace ${namespace} to finish terminating`,
    async () =>
      (await kubectl(['get', 'namespace', namespace, '--ignore-not-found', '-o', 'jsonpath={.status.phase}'])) !==
        'Terminating' || undefined,
    180_000,
  );
}

export interface InstalledWebhook {
  /** What `manifest --webhook --ca-bundle` printed: apply it, delete it. */
  readonly printed: string;
  /** The CA in the caBundle and the serving pair it signed (remove with removeAuthority). */
  readonly authority: Authority;
}

/** The CA an operator makes for `--ca-bundle` (or the chart's webhook.caBundle) and the serving pair it signs. */
export function webhookAuthority(name: string): Authority {
  // Valid for 30 days: past the 15 days within which `check` warns of an expiry.
  return makeAuthority(
    name,
    {
      commonName: `interlock-webhook.${WEBHOOK_NS}.svc`,
      altNames: [`DNS:interlock-webhook.${WEBHOOK_NS}.svc`],
    },
    '30',
  );
}

/** The Secret interlock-webhook-tls from the serving pair, as docs/operator.md has the operator make it. */
export async function applyServingSecret(authority: Authority): Promise<void> {
  // Applied, not created: a cluster kept from an earlier run may hold the Secret already.
  const secret = await kubectl([
    ...['create', 'secret', 'tls', 'interlock-webhook-tls', '-n', WEBHOOK_NS],
    ...['--cert', join(authority.dir, 'tls.crt'), '--key', join(authority.dir, 'tls.key')],
    ...['--dry-run=client', '-o', 'yaml'],
  ]);
  await kubectl(['apply', '-f', '-'], secret);
}

/**
 * The webhook as docs/operator.md installs it without cert-manager: `manifest --webhook
 * --ca-bundle FILE` applied as printed, the Secret interlock-webhook-tls created from the serving
 * pair, then its rollout waited for.
 */
export async function installWebhook(name: string): Promise<InstalledWebhook> {
  const authority = webhookAuthority(name);
  const printed = await interlock([
    'manifest',
    '--webhook',
    '--ca-bundle',
    join(authority.dir, 'ca.crt'),
    '--image',
    IMAGE,
    '--api-server-cidr',
    '10.231.0.2/32',
  ]);
  await notTerminating(WEBHOOK_NS);
  await kubectl(['apply', '-f', '-'], printed);
  await applyServingSecret(authority);
  await kubectl(['rollout', 'status', 'deployment/interlock-webhook', '-n', WEBHOOK_NS, '--timeout=180s']);
  return { printed, authority };
}

/** The node agent as `manifest --node-agent --mesh linkerd [node flags]` prints it, applied and rolled out. */
export async function installAgent(nodeFlags: readonly string[] = []): Promise<string> {
  const printed = await interlock(['manifest', '--node-agent', '--mesh', 'linkerd', '--image', IMAGE, ...nodeFlags]);
  await notTerminating(NODE_NS);
  await kubectl(['apply', '-f', '-'], printed);
  await kubectl(['rollout', 'status', 'daemonset/interlock-node-linkerd', '-n', NODE_NS, '--timeout=180s']);
  return printed;
}
