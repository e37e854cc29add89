import { Registry } from 'prom-client';
import { defaultImageWarning } from '../../flags/default-image.js';
import { EXIT } from '../../../config/exit-codes.js';
import { parseCommandLine } from '../../../config/parse-command-line.js';
import { LOG_LEVEL_FLAG } from '../../../config/validate-config.js';
import type { DefaultedFlag } from '../../../config/flag-def.js';
import { flagSource, flagValue, type ParsedFlags } from '../../../config/parsed-flags.js';
import { discoverCluster } from '../../../kube/discover-cluster.js';
import { ownContainerImage } from '../../../kube/own-image.js';
import { createLogger, type Logger } from '../../../output/logger.js';
import { startMetricsServer } from '../../../webhook/metrics-server.js';
import { loadClientCa, loadTlsPair, watchTlsPair, type TlsPair, type TlsPaths } from '../../../webhook/tls-files.js';
import { promWebhookMetrics, type WebhookMetrics } from '../../../webhook/webhook-metrics.js';
import { webhookBudget } from '../../../webhook/webhook-budget.js';
import { startWebhookServer, type WebhookServer } from '../../../webhook/webhook-server.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { commandError } from '../../command-error.js';
import { WEBHOOK_COMMAND_FLAGS } from './flags.js';
import { IMAGE_FLAG } from '../../flags/image-flag.js';
import { PLATFORM_FLAG } from '../../flags/platform-flag.js';
import {
  BIND_FLAG,
  CLIENT_CA_FLAG,
  CLIENT_NAME_FLAG,
  DRAIN_TIMEOUT_FLAG,
  MAX_REQUEST_BYTES_FLAG,
  METRICS_BIND_FLAG,
  ON_ERROR_FLAG,
  REQUEST_DEADLINE_FLAG,
  TLS_CERT_FLAG,
  TLS_KEY_FLAG,
} from './server-flags.js';

const TLS_POLL_MS = 5000;

const cannotListen = (host: string, port: number, error: Error): CommandOutcome =>
  commandError('webhook', EXIT.noInput, {
    reason: 'ConfigInvalid',
    message: `cannot listen on ${host}:${port}: ${error.message}`,
  });

const usage = (message: string): CommandOutcome =>
  commandError('webhook', EXIT.invalidConfig, { reason: 'ConfigInvalid', message });

/** The container of `manifest --webhook`'s Deployment whose image is injected when --image is not given. */
const OWN_CONTAINER = 'webhook';

/**
 * The validator image to inject: --image when given; in a pod (POD_NAME from the downward API),
 * this pod's own image as the API server holds it, so that kustomize's `images:` or `kubectl set
 * image` changes both at once; otherwise the default, with a warning. Unreadable: no start.
 */
async function injectedImage(
  flags: ParsedFlags,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CommandOutcome | { image: string; source: 'flag' | 'pod' | 'default' }> {
  if (flagSource(flags, IMAGE_FLAG) !== undefined) return { image: flagValue(flags, IMAGE_FLAG), source: 'flag' };
  if (!env.POD_NAME) return { image: flagValue(flags, IMAGE_FLAG), source: 'default' };
  const access = discoverCluster(env);
  const own = access.ok ? await ownContainerImage(access.value, env, OWN_CONTAINER, 10_000) : access;
  if (own.ok) return { image: own.value, source: 'pod' };
  return commandError('webhook', EXIT.noInput, {
    reason: own.error.reason,
    message: `${own.error.message}: the image to inject is this pod's own (container ${OWN_CONTAINER}) unless --image names it`,
  });
}

/** --client-ca's bundle and --client-name's names; a name without a CA is a usage error. */
async function clientAuth(
  flags: ParsedFlags,
): Promise<CommandOutcome | { clientCa?: Buffer; clientNames?: readonly string[] }> {
  const clientCa = await loadClientCa(flagValue(flags, CLIENT_CA_FLAG));
  if (!clientCa.ok) return commandError('webhook', EXIT.noInput, clientCa.error);
  const clientNames = flagValue(flags, CLIENT_NAME_FLAG);
  if (clientNames && !clientCa.value)
    return usage('--client-name needs --client-ca: a name is only worth checking on a certificate the CA verified');
  return { ...(clientCa.value ? { clientCa: clientCa.value } : {}), ...(clientNames ? { clientNames } : {}) };
}

/** `interlock webhook`: serves until `stop` aborts, then drains in-flight requests and exits 0. */
export async function runWebhookCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  stop: AbortSignal,
): Promise<CommandOutcome> {
  const parsed = parseCommandLine('webhook', argv, env, WEBHOOK_COMMAND_FLAGS);
  if (!parsed.ok) return usage(parsed.error.message);
  const get = <T>(flag: DefaultedFlag<T>): T => flagValue(parsed.value, flag);
  const paths = { cert: get(TLS_CERT_FLAG), key: get(TLS_KEY_FLAG) };
  const tls = await loadTlsPair(paths);
  if (!tls.ok) return commandError('webhook', EXIT.noInput, tls.error);
  const client = await clientAuth(parsed.value);
  if ('exitCode' in client) return client;
  const { clientCa, clientNames } = client;
  const injected = await injectedImage(parsed.value, env);
  if ('exitCode' in injected) return injected;
  const { image } = injected;
  const log = createLogger('json', get(LOG_LEVEL_FLAG));
  const registry = new Registry();
  const metrics = promWebhookMetrics(registry);
  metrics.servingCertificate(tls.value.cert);
  const { host, port } = get(BIND_FLAG);
  const server = await startWebhookServer({
    host,
    port,
    tls: tls.value,
    ...(clientCa ? { clientCa } : {}),
    ...(clientNames ? { clientNames } : {}),
    settings: { image, annotations: {}, platform: get(PLATFORM_FLAG) },
    onError: get(ON_ERROR_FLAG),
    deadlineMs: get(REQUEST_DEADLINE_FLAG),
    maxBodyBytes: get(MAX_REQUEST_BYTES_FLAG),
    budget: webhookBudget(get(MAX_REQUEST_BYTES_FLAG)),
    metrics,
    log,
  }).catch((error: Error) => error);
  if (server instanceof Error) return cannotListen(host, port, server);
  const scrape = get(METRICS_BIND_FLAG);
  const metricsServer = await startMetricsServer({ ...scrape, registry, draining: server.draining }).catch(
    (error: Error) => error,
  );
  if (metricsServer instanceof Error) {
    await server.drain(0);
    return cannotListen(scrape.host, scrape.port, metricsServer);
  }
  const watch = watchPair(paths, tls.value, server, metrics, log);
  const listening = { host, port: server.port, metricsPort: metricsServer.port, clientAuth: Boolean(clientCa) };
  log.info({ ...listening, clientNames, image, imageFrom: injected.source }, 'webhook listening');
  if (injected.source === 'default') log.warn({ image }, defaultImageWarning('webhook').trim());
  if (!stop.aborted) await new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }));
  log.info({}, 'draining');
  watch.close();
  const cutOff = await server.drain(get(DRAIN_TIMEOUT_FLAG));
  await metricsServer.close();
  log.info({ connectionsCutOff: cutOff }, 'drained');
  return { exitCode: EXIT.pass, stdout: '', stderr: '' };
}

/** Reloads the serving pair when its Secret changes; a broken new pair is reported and the current one kept. */
function watchPair(paths: TlsPaths, current: TlsPair, server: WebhookServer, metrics: WebhookMetrics, log: Logger) {
  return watchTlsPair(
    paths,
    current,
    TLS_POLL_MS,
    (pair) => {
      server.setTls(pair);
      metrics.tlsReload('ok');
      metrics.servingCertificate(pair.cert);
      log.info({ cert: paths.cert }, 'serving certificate reloaded');
    },
    (message) => {
      metrics.tlsReload('error');
      log.warn({ reason: 'ConfigInvalid', message }, 'serving certificate not reloaded; the current one stays');
    },
  );
}
