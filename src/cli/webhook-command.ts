import { Registry } from 'prom-client';
import { defaultImageWarning } from './default-image.js';
import { EXIT } from '../config/exit-codes.js';
import { parseCommandLine } from '../config/parse-command-line.js';
import type { LogLevel } from '../config/validate-config.js';
import { createLogger, type Logger } from '../output/logger.js';
import type { OnError } from '../webhook/admit.js';
import { startMetricsServer } from '../webhook/metrics-server.js';
import { loadClientCa, loadTlsPair, watchTlsPair, type TlsPair, type TlsPaths } from '../webhook/tls-files.js';
import { promWebhookMetrics, type WebhookMetrics } from '../webhook/webhook-metrics.js';
import { webhookBudget } from '../webhook/webhook-budget.js';
import { startWebhookServer, type WebhookServer } from '../webhook/webhook-server.js';
import type { CommandOutcome } from './command-outcome.js';
import { commandError } from './command-error.js';
import { WEBHOOK_COMMAND_FLAGS } from './webhook-command-flags.js';

const TLS_POLL_MS = 5000;

const cannotListen = (host: string, port: number, error: Error): CommandOutcome =>
  commandError('webhook', EXIT.noInput, {
    reason: 'ConfigInvalid',
    message: `cannot listen on ${host}:${port}: ${error.message}`,
  });

const usage = (message: string): CommandOutcome =>
  commandError('webhook', EXIT.invalidConfig, { reason: 'ConfigInvalid', message });

/** `interlock webhook`: serves until `stop` aborts, then drains in-flight requests and exits 0. */
export async function runWebhookCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  stop: AbortSignal,
): Promise<CommandOutcome> {
  const parsed = parseCommandLine('webhook', argv, env, WEBHOOK_COMMAND_FLAGS);
  if (!parsed.ok) return usage(parsed.error.message);
  const values = parsed.value.values;
  const paths = { cert: values.get('tls-cert') as string, key: values.get('tls-key') as string };
  const tls = await loadTlsPair(paths);
  if (!tls.ok) return commandError('webhook', EXIT.noInput, tls.error);
  const clientCa = await loadClientCa(values.get('client-ca') as string | undefined);
  if (!clientCa.ok) return commandError('webhook', EXIT.noInput, clientCa.error);
  const log = createLogger('json', values.get('log-level') as LogLevel);
  const registry = new Registry();
  const metrics = promWebhookMetrics(registry);
  metrics.servingCertificate(tls.value.cert);
  const { host, port } = values.get('bind') as { host: string; port: number };
  const server = await startWebhookServer({
    host,
    port,
    tls: tls.value,
    ...(clientCa.value ? { clientCa: clientCa.value } : {}),
    settings: { image: values.get('image') as string, annotations: {} },
    onError: values.get('on-error') as OnError,
    deadlineMs: values.get('request-deadline') as number,
    maxBodyBytes: values.get('max-request-bytes') as number,
    budget: webhookBudget(values.get('max-request-bytes') as number),
    metrics,
    log,
  }).catch((error: Error) => error);
  if (server instanceof Error) return cannotListen(host, port, server);
  const scrape = values.get('metrics-bind') as { host: string; port: number };
  const metricsServer = await startMetricsServer({ ...scrape, registry, draining: server.draining }).catch(
    (error: Error) => error,
  );
  if (metricsServer instanceof Error) {
    await server.drain(0);
    return cannotListen(scrape.host, scrape.port, metricsServer);
  }
  const watch = watchPair(paths, tls.value, server, metrics, log);
  const image = values.get('image') as string;
  const listening = { host, port: server.port, metricsPort: metricsServer.port, clientAuth: Boolean(clientCa.value) };
  log.info({ ...listening, image }, 'webhook listening');
  if (!parsed.value.sources.has('image')) log.warn({ image }, defaultImageWarning('webhook').trim());
  if (!stop.aborted) await new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }));
  log.info({}, 'draining');
  watch.close();
  const cutOff = await server.drain(values.get('drain-timeout') as number);
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
