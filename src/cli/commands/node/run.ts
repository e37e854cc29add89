import { Registry } from 'prom-client';
import type { Server } from 'node:http';
import { EXIT } from '../../../config/exit-codes.js';
import type { ClusterAccess } from '../../../kube/cluster-access.js';
import { discoverCluster } from '../../../kube/discover-cluster.js';
import { ownContainerImage } from '../../../kube/own-image.js';
import { fail, ok, type Result } from '../../../reason/result.js';
import { trustedRepository } from '../../../node-agent/trusted-repository.js';
import { listAllPods, watchPodsOnce, type PodWatchOptions } from '../../../kube/watch-pods.js';
import { createLogger, type Logger } from '../../../output/logger.js';
import { NodeAgent } from '../../../node-agent/agent.js';
import { kubeAgentApi } from '../../../node-agent/agent-api.js';
import { promAgentMetrics, promGateMetrics } from '../../../node-agent/agent-metrics.js';
import { patchNodeCondition, readNodeState } from '../../../kube/node-status.js';
import { removeNodeTaints } from '../../../kube/nodes-taint.js';
import { SandboxEventSink } from '../../../node-agent/sandbox-events.js';
import { SANDBOX_FAILED_REASON } from '../../../node-agent/sandbox-failure.js';
import type { CniAuditSource } from '../../../node-agent/cni-audit-source.js';
import { REAL_CLOCK, type AgentSettings } from '../../../node-agent/agent-settings.js';
import { startHealthServer } from '../../../node-agent/health-server.js';
import { runPodInformer } from '../../../node-agent/pod-informer.js';
import type { CommandOutcome } from '../../command-outcome.js';
import { commandError } from '../../command-error.js';
import { criClient, type RuntimeClient } from '../../../node-agent/cri/cri-client.js';
import { auditAskingRuntime, cniWatchSource, multusApiReader } from './cni-audit.js';
import type { CniAuditOptions } from '../../../cni/run-cni-audit.js';
import { nodeConfigOf } from './config.js';
import { DEFAULT_RETRY } from '../../../node-agent/retry-delay.js';
import { fanOut, RecheckRoster } from '../../../node-agent/recheck/roster.js';
import type { NodeConfig, NodeRecheck } from './config.js';
import { startRecheck } from './recheck.js';

const usage = (message: string): CommandOutcome =>
  commandError('node', EXIT.invalidConfig, { reason: 'ConfigInvalid', message });

/**
 * `interlock node`: runs until SIGTERM/SIGINT, then drains in-flight actions and exits 0. A CNI
 * audit source (cni-check's directory watch) feeds the breaker when given.
 */
export async function runNodeCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  stopSignal: AbortSignal,
  cniAudit?: CniAuditSource,
): Promise<CommandOutcome> {
  const config = nodeConfigOf(argv, env);
  if (typeof config === 'string') return usage(config);
  // One CRI client, for the re-check and the audit, which asks the runtime what it loaded.
  const runtime = config.criSocket === undefined ? undefined : criClient(config.criSocket.path);
  const access = discoverCluster(env);
  if (!access.ok) return commandError('node', EXIT.noInput, access.error);
  const audit =
    cniAudit ?? (config.cniAudit && cniWatchSource(auditOptions(config, config.cniAudit, access.value, runtime)));
  const trusted = await trustedImagesOf(config.settings.trustedImages, access.value, env);
  if (!trusted.ok) return commandError('node', EXIT.noInput, trusted.error);
  const settings: AgentSettings = { ...config.settings, trustedImages: trusted.value };
  const log = createLogger('json', config.logLevel);
  const registry = new Registry();
  const agent = new NodeAgent(settings, {
    api: kubeAgentApi(access.value, settings.node, 10_000),
    metrics: promAgentMetrics(registry),
    log,
    clock: REAL_CLOCK,
    random: Math.random,
    ...(settings.gate ? { gate: gatePorts(access.value, settings, registry) } : {}),
  });
  const { host, port } = config.listen;
  const server = await startHealthServer(registry, () => agent.synced, host, port).catch((error: Error) => error);
  if (server instanceof Error) return usage(`--listen ${host}:${port}: ${server.message}`);
  log.info(startedFields({ ...config, settings }, access.value, server), 'node agent started');
  await serveUntilStopped(
    {
      labelSelector: config.labelSelector,
      settings,
      access: access.value,
      agent,
      server,
      log,
      audit,
      registry,
      recheck: config.recheck && runtime ? { ...config.recheck, runtime } : undefined,
    },
    stopSignal,
  );
  return { exitCode: 0, stdout: '', stderr: '' };
}

/** The container of `manifest --node-agent`'s DaemonSet whose image the agent trusts without --trusted-image. */
const OWN_CONTAINER = 'node-agent';

/**
 * --trusted-image when given; in a pod (POD_NAME from the downward API), the repository of this
 * pod's own image as the API server holds it, so that kustomize's `images:` or `kubectl set image`
 * moves the trust with the image; outside a pod, none.
 */
async function trustedImagesOf(
  given: readonly string[],
  access: ClusterAccess,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Result<readonly string[], 'KubeUnavailable' | 'KubeApiError'>> {
  if (given.length > 0 || !env.POD_NAME) return ok(given);
  const own = await ownContainerImage(access, env, OWN_CONTAINER, 10_000);
  if (!own.ok)
    return fail(
      own.error.reason,
      `${own.error.message}: without --trusted-image the agent trusts its own image's repository (container ${OWN_CONTAINER})`,
    );
  return ok([trustedRepository(own.value)]);
}

/** The audit as the flags ask for it: asking containerd over the CRI, reading Multus's objects from the API. */
function auditOptions(
  config: NodeConfig,
  options: CniAuditOptions,
  access: ClusterAccess,
  runtime: Parameters<typeof auditAskingRuntime>[1],
): CniAuditOptions {
  const asking = auditAskingRuntime(options, runtime, config.criSocket);
  return config.readsAttachments ? { ...asking, multusApi: multusApiReader(access, config.settings.node) } : asking;
}

/** What the agent's first log line says it runs with. */
function startedFields(config: NodeConfig, access: ClusterAccess, server: Server): Record<string, unknown> {
  const { settings } = config;
  const address = server.address();
  return {
    node: settings.node,
    container: settings.container,
    failureExitCode: settings.failureExitCode,
    action: settings.action,
    taint: settings.taint,
    gate: settings.gate
      ? {
          condition: settings.gate.condition,
          startupTaint: settings.gate.startupTaint ?? 'none',
          plugin: settings.gate.policy.plugin,
        }
      : 'off',
    trustedImages: settings.trustedImages,
    namespaces: settings.namespaces ?? 'all',
    recheck: config.recheck
      ? { intervalMs: config.recheck.intervalMs, socket: config.recheck.socketPath, action: config.recheck.action }
      : 'off',
    cluster: access.origin,
    listen: typeof address === 'object' && address ? `${address.address}:${address.port}` : String(address),
  };
}

/** The node gate's reads and writes of its own Node, and its metrics. */
function gatePorts(access: ClusterAccess, settings: AgentSettings, registry: Registry) {
  const taint = settings.gate?.startupTaint;
  return {
    readNode: () => readNodeState(access, settings.node, 10_000),
    patchCondition: (condition: Parameters<typeof patchNodeCondition>[2]) =>
      patchNodeCondition(access, settings.node, condition, 10_000),
    removeStartupTaint: () =>
      taint
        ? removeNodeTaints(access, settings.node, taint, 10_000)
        : Promise.resolve({ ok: true as const, value: 'unchanged' as const }),
    metrics: promGateMetrics(registry),
  };
}

/**
 * The kubelet's FailedCreatePodSandBox Events, cluster-wide by reason (the API cannot select an
 * Event by its source host), kept only for this node by the sink: the node gate's sight of a mesh
 * plugin that fails before any validator can run.
 */
function watchSandboxEvents(running: Running, stopSignal: AbortSignal): Promise<void> | undefined {
  const { settings, access, agent, log } = running;
  if (!settings.gate) return undefined;
  const sink = new SandboxEventSink(
    settings.node,
    settings.gate.policy.plugin,
    (sighting) => agent.sandboxSighting(sighting),
    (failure) => log.warn({ status: failure.status }, failure.message),
  );
  const options: PodWatchOptions = {
    path: '/api/v1/events',
    fieldSelector: `reason=${SANDBOX_FAILED_REASON},type=Warning`,
    pageSize: 500,
    requestTimeoutMs: 30_000,
    watchTimeoutSeconds: 300 + Math.floor(Math.random() * 300),
    idleMs: 10 * 60_000,
  };
  const ports = {
    list: () => listAllPods(access, options),
    watch: (rv: string, signal: AbortSignal) => watchPodsOnce(access, options, rv, sink, signal),
  };
  return runPodInformer(ports, sink, REAL_CLOCK, DEFAULT_RETRY, Math.random, stopSignal, () => {
    agent.sandboxSynced = true;
  });
}

/** In-flight actions get this long after SIGTERM; well inside the kubelet's default 30 s grace. */
const STOP_DEADLINE_MS = 4000;

interface Running {
  readonly labelSelector: string | undefined;
  readonly settings: AgentSettings;
  readonly access: ClusterAccess;
  readonly agent: NodeAgent;
  readonly server: Server;
  readonly log: Logger;
  readonly audit: CniAuditSource | undefined;
  readonly registry: Registry;
  readonly recheck: (NodeRecheck & { readonly runtime: RuntimeClient }) | undefined;
}

/** Watches the node's pods and acts on them until the stop signal, then drains and closes. */
async function serveUntilStopped(running: Running, stopSignal: AbortSignal): Promise<void> {
  const { labelSelector, settings, access, agent, server, log, audit } = running;
  // The re-check shares the one pod watch: its roster sees every list and change the agent sees.
  const roster = running.recheck ? new RecheckRoster(settings.node) : undefined;
  const sink = roster ? fanOut(agent, roster) : agent;
  const watchOptions: PodWatchOptions = {
    // One namespace narrows the watch on the server; several are filtered by the agent.
    fieldSelector: `spec.nodeName=${settings.node}${settings.namespaces?.length === 1 ? `,metadata.namespace=${settings.namespaces[0]}` : ''}`,
    ...(labelSelector ? { labelSelector } : {}),
    pageSize: 500,
    requestTimeoutMs: 30_000,
    watchTimeoutSeconds: 300 + Math.floor(Math.random() * 300),
    idleMs: 10 * 60_000,
  };
  const ports = {
    list: () => listAllPods(access, watchOptions),
    watch: (rv: string, signal: AbortSignal) => watchPodsOnce(access, watchOptions, rv, sink, signal),
  };
  const informer = runPodInformer(ports, sink, REAL_CLOCK, DEFAULT_RETRY, Math.random, stopSignal, () =>
    log.info({}, 'pods listed: ready'),
  );
  const worker = agent.run();
  const sandboxWatch = watchSandboxEvents(running, stopSignal);
  const recheck =
    running.recheck && roster
      ? startRecheck(running.recheck, { access, agent, roster, registry: running.registry, log })
      : undefined;
  const stopAudit = audit?.subscribe((verdict) => agent.audit(verdict));
  const ticker = setInterval(() => agent.tickBreaker(), Math.min(1000, settings.breaker.windowMs / 4));
  await new Promise<void>((resolve) => {
    if (stopSignal.aborted) resolve();
    else stopSignal.addEventListener('abort', () => resolve(), { once: true });
  });
  clearInterval(ticker);
  stopAudit?.();
  await Promise.race([recheck?.stop(), REAL_CLOCK.sleep(STOP_DEADLINE_MS)]);
  log.info({ deadlineMs: STOP_DEADLINE_MS }, 'stopping: finishing in-flight actions');
  const drained = await agent.stop(STOP_DEADLINE_MS);
  await Promise.race([Promise.allSettled([informer, worker, sandboxWatch]), REAL_CLOCK.sleep(200)]);
  server.closeAllConnections();
  server.close();
  log.info(
    { drained },
    drained ? 'stopped: in-flight actions finished' : 'stopped: in-flight actions cut off at the deadline',
  );
}
