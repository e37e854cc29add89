import { Registry } from 'prom-client';
import { EXIT } from '../config/exit-codes.js';
import type { FlagDef } from '../config/flag-def.js';
import { HELP_FLAG } from '../config/command-flags.js';
import { parseCommandLine } from '../config/parse-command-line.js';
import { LOG_LEVEL_FLAG, type LogLevel } from '../config/validate-config.js';
import { createLogger } from '../output/logger.js';
import type { OnError } from '../webhook/admit.js';
import { loadTlsPair, watchTlsPair } from '../webhook/tls-files.js';
import { WEBHOOK_FLAGS } from '../webhook/webhook-flags.js';
import { promWebhookMetrics } from '../webhook/webhook-metrics.js';
import { startWebhookServer } from '../webhook/webhook-server.js';
import { WEBHOOK_ANNOTATIONS } from '../webhook/webhook-annotations.js';
import type { CommandOutcome } from './command-outcome.js';
import { formatHelp } from './help.js';
import { MANIFEST_FLAGS } from './manifest-command.js';

const TLS_POLL_MS = 5000;

export const WEBHOOK_COMMAND_FLAGS: readonly FlagDef[] = [
  ...WEBHOOK_FLAGS,
  ...MANIFEST_FLAGS.filter((flag) => flag.name === 'image'),
  LOG_LEVEL_FLAG,
  HELP_FLAG,
];

const SUMMARY = `Mutating admission webhook (AdmissionReview admission.k8s.io/v1 over TLS, POST /mutate):
for a Pod CREATE holding linkerd-network-validator or istio-validation, answers a JSONPatch that
runs Interlock in that container in the mesh's place; every other request is allowed unchanged.
Runs until SIGTERM, then drains. 'interlock manifest --webhook' prints its deployment.`;

const usage = (message: string): CommandOutcome => ({
  exitCode: EXIT.invalidConfig,
  stdout: '',
  stderr: `interlock webhook: ConfigInvalid: ${message}\n`,
});

/** `interlock webhook`: serves until `stop` aborts, then drains in-flight requests and exits 0. */
export async function runWebhookCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  stop: AbortSignal,
): Promise<CommandOutcome> {
  const parsed = parseCommandLine('webhook', argv, env, WEBHOOK_COMMAND_FLAGS);
  if (!parsed.ok) return usage(parsed.error.message);
  const values = parsed.value.values;
  if (values.has('help'))
    return { exitCode: 0, stdout: formatHelp('webhook', SUMMARY, WEBHOOK_COMMAND_FLAGS), stderr: '' };
  const paths = { cert: values.get('tls-cert') as string, key: values.get('tls-key') as string };
  const tls = await loadTlsPair(paths);
  if (!tls.ok)
    return { exitCode: EXIT.noInput, stdout: '', stderr: `interlock webhook: ConfigInvalid: ${tls.error.message}\n` };
  const log = createLogger('json', values.get('log-level') as LogLevel);
  const registry = new Registry();
  const metrics = promWebhookMetrics(registry);
  const { host, port } = values.get('bind') as { host: string; port: number };
  const server = await startWebhookServer({
    host,
    port,
    tls: tls.value,
    settings: { image: values.get('image') as string, annotations: WEBHOOK_ANNOTATIONS },
    onError: values.get('on-error') as OnError,
    deadlineMs: values.get('request-deadline') as number,
    maxBodyBytes: values.get('max-request-bytes') as number,
    bufferBudgetBytes: 64 * 1024 * 1024,
    metrics,
    registry,
    log,
  }).catch((error: Error) => error);
  if (server instanceof Error)
    return {
      exitCode: EXIT.noInput,
      stdout: '',
      stderr: `interlock webhook: cannot listen on ${host}:${port}: ${server.message}\n`,
    };
  const watch = watchTlsPair(
    paths,
    tls.value,
    TLS_POLL_MS,
    (pair) => {
      server.setTls(pair);
      metrics.tlsReload('ok');
      log.info({ cert: paths.cert }, 'serving certificate reloaded');
    },
    (message) => {
      metrics.tlsReload('error');
      log.warn({ reason: 'ConfigInvalid', message }, 'serving certificate not reloaded; the current one stays');
    },
  );
  log.info({ host, port: server.port, image: values.get('image') }, 'webhook listening');
  if (!stop.aborted) await new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }));
  log.info({}, 'draining');
  watch.close();
  await server.drain(values.get('drain-timeout') as number);
  log.info({}, 'drained');
  return { exitCode: EXIT.pass, stdout: '', stderr: '' };
}
