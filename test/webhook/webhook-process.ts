import { launchArgs } from '../harness/pod-namespace.js';
import { spawnWebhook, type WebhookProcess } from './webhook-client.js';

/** `interlock webhook` as the image runs it (the start-up snapshot), on 127.0.0.1 and a free port. */
export function startWebhook(
  cert: string,
  key: string,
  extra: readonly string[] = [],
  env: Record<string, string> = {},
  image?: string | null,
): Promise<WebhookProcess> {
  return spawnWebhook(launchArgs('snapshot'), cert, key, extra, env, image);
}
