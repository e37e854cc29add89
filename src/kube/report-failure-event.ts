import { hostname } from 'node:os';
import { discoverCluster } from './discover-cluster.js';
import { SERVICE_ACCOUNT_DIR } from './in-cluster.js';
import { buildFailureEvent } from './pod-event.js';
import { postEvent } from './post-event.js';

/** The two log levels reporting needs; pino's Logger fits. */
export interface EventLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface ReportFailureInput {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly reason: string;
  readonly terminationMessage: string;
  readonly log: EventLog;
  /** The whole report (discovery and the POST) never takes longer: 1 s in an init container. */
  readonly timeoutMs?: number;
  readonly containerName?: string;
  readonly serviceAccountDir?: string;
  readonly now?: Date;
}

const EVENT_TIMEOUT_MS = 1000;

/**
 * Posts the failure as a Warning Event on the pod. Never throws and never decides anything: a
 * missing pod identity, no cluster, a 403 or a slow API is logged and the verdict stands.
 */
export async function reportFailureEvent(input: ReportFailureInput): Promise<boolean> {
  try {
    return await report(input);
  } catch (error) {
    input.log.warn({ event: 'not-reported' }, `failure Event not reported: ${(error as Error).message}`);
    return false;
  }
}

async function report(input: ReportFailureInput): Promise<boolean> {
  const { env, log } = input;
  // One budget for all of it: reading the credentials (bounded, never blocking) counts too.
  const deadline = performance.now() + (input.timeoutMs ?? EVENT_TIMEOUT_MS);
  const name = env.POD_NAME;
  const access = discoverCluster(env, input.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
  if (!access.ok) {
    log.warn(
      { event: 'not-reported', cause: access.error.reason },
      `failure Event not reported: ${access.error.message}`,
    );
    return false;
  }
  const namespace = env.POD_NAMESPACE || access.value.namespace;
  if (!name || !namespace) {
    log.warn(
      { event: 'not-reported' },
      'failure Event not reported: POD_NAME and POD_NAMESPACE must come from the downward API (see `interlock manifest`)',
    );
    return false;
  }
  const event = buildFailureEvent({
    pod: { name, namespace, ...(env.POD_UID ? { uid: env.POD_UID } : {}) },
    reason: input.reason,
    terminationMessage: input.terminationMessage,
    instance: env.NODE_NAME || hostname(),
    now: input.now ?? new Date(),
    ...(input.containerName ? { containerName: input.containerName } : {}),
  });
  const posted = await postEvent(access.value, event, Math.max(1, Math.round(deadline - performance.now())));
  if (!posted.ok) {
    log.warn(
      { event: 'not-reported', cause: posted.error.reason },
      `failure Event not reported: ${posted.error.message}`,
    );
    return false;
  }
  log.info(
    { event: posted.value.name, count: posted.value.count, namespace, server: access.value.origin },
    `failure Event ${posted.value.name} reported on pod ${namespace}/${name} (count ${posted.value.count})`,
  );
  return true;
}
