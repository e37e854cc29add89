import type { IncomingMessage } from 'node:http';
import type { ClusterAccess } from './cluster-access.js';
import { listPodsPage, type ApiFailure, type ApiResult } from './pods-api.js';
import { openKubeRequest } from './request.js';

export type PodEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** Where the watch loop reports; the agent reduces each pod to its view at once. */
export interface PodWatchSink {
  /** A complete list: pods absent from it are gone. */
  relisted(pods: readonly unknown[]): void;
  changed(type: PodEventType, pod: unknown): void;
  /** A watch ended and is resumed (`dropped`) or a relist follows (`expired`, 410 Gone). */
  restarted(cause: 'dropped' | 'expired' | 'error'): void;
  apiError(failure: ApiFailure): void;
}

export interface PodWatchOptions {
  /** The collection listed and watched: `/api/v1/pods` unless given (`/api/v1/events` for the sandbox watch). */
  readonly path?: string;
  readonly fieldSelector: string;
  readonly labelSelector?: string;
  readonly pageSize: number;
  readonly requestTimeoutMs: number;
  /** Server-side watch timeout; the watch is then resumed from the last resourceVersion. */
  readonly watchTimeoutSeconds: number;
  /** A watch that sends nothing (not even a bookmark) for this long is presumed dead and reopened. */
  readonly idleMs: number;
}

/** How many times one list may start over on an expired continue token before the caller's backoff takes over. */
const LIST_RESTARTS = 2;

/**
 * Lists every page; a 410 in the middle (continue token expired) starts the list over, at most
 * LIST_RESTARTS times: a token that always expires must not become a storm of relists.
 */
export async function listAllPods(
  access: ClusterAccess,
  options: PodWatchOptions,
): Promise<ApiResult<{ items: unknown[]; resourceVersion: string }>> {
  const items: unknown[] = [];
  let continueToken: string | undefined;
  let resourceVersion = '';
  let restarts = 0;
  for (;;) {
    const query: Record<string, string> = { fieldSelector: options.fieldSelector, limit: String(options.pageSize) };
    if (options.labelSelector) query.labelSelector = options.labelSelector;
    if (continueToken) query.continue = continueToken;
    const page = await listPodsPage(access, query, options.requestTimeoutMs, options.path);
    if (!page.ok && page.error.status === 410 && continueToken && restarts++ < LIST_RESTARTS) {
      items.length = 0;
      continueToken = undefined;
      continue;
    }
    if (!page.ok) return page;
    if (!continueToken) resourceVersion = page.value.resourceVersion;
    items.push(...page.value.items);
    continueToken = page.value.continueToken;
    if (!continueToken) return { ok: true, value: { items, resourceVersion } };
  }
}

export type WatchEnd =
  | { readonly kind: 'ended'; readonly resourceVersion: string }
  | { readonly kind: 'expired' }
  | { readonly kind: 'failed'; readonly error: ApiFailure; readonly resourceVersion: string };

interface WatchLine {
  type?: string;
  object?: { metadata?: { resourceVersion?: string }; code?: number; message?: string };
}

function handleLine(line: string, sink: PodWatchSink, state: WatchState): void {
  let event: WatchLine;
  try {
    event = JSON.parse(line) as WatchLine;
  } catch {
    state.error = `not JSON: ${line.slice(0, 80)}`;
    return;
  }
  if (event.type === 'ERROR') {
    if (event.object?.code === 410) state.expired = true;
    else state.error = event.object?.message ?? 'watch ERROR event';
    return;
  }
  const rv = event.object?.metadata?.resourceVersion;
  if (rv) state.rv = rv;
  if (event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED')
    sink.changed(event.type, event.object);
}

function streamLines(response: IncomingMessage, onLine: (line: string) => void, onActivity: () => void): void {
  let buffer = '';
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    onActivity();
    buffer += chunk;
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) onLine(line);
      newline = buffer.indexOf('\n');
    }
  });
}

type WatchState = { rv: string; expired: boolean; error?: string };

function failedEnd(status: number, message: string, resourceVersion: string, retryAfterSeconds?: number): WatchEnd {
  return { kind: 'failed', error: { status, retryAfterSeconds, message }, resourceVersion };
}

/** How a stream that stopped ends: expired, failed on a bad line, or a plain end to resume from. */
function endOfState(state: WatchState): WatchEnd {
  if (state.expired) return { kind: 'expired' };
  if (state.error) return failedEnd(0, state.error, state.rv);
  return { kind: 'ended', resourceVersion: state.rv };
}

/** A watch answered with anything but 200: 410 is an expired version, the rest a failure. */
function statusEnd(response: IncomingMessage, resourceVersion: string, path: string): WatchEnd {
  const status = response.statusCode ?? 0;
  if (status === 410) return { kind: 'expired' };
  const header = response.headers['retry-after'];
  const retryAfter = header && /^\d+$/.test(header) ? Number(header) : undefined;
  return failedEnd(status, `watch ${path} answered ${status}`, resourceVersion, retryAfter);
}

function watchQuery(options: PodWatchOptions, resourceVersion: string): Record<string, string> {
  const query: Record<string, string> = {
    watch: 'true',
    allowWatchBookmarks: 'true',
    resourceVersion,
    fieldSelector: options.fieldSelector,
    timeoutSeconds: String(options.watchTimeoutSeconds),
  };
  if (options.labelSelector) query.labelSelector = options.labelSelector;
  return query;
}

/** One watch from `resourceVersion` until the stream ends, expires, fails or `signal` aborts. */
export function watchPodsOnce(
  access: ClusterAccess,
  options: PodWatchOptions,
  resourceVersion: string,
  sink: PodWatchSink,
  signal: AbortSignal,
): Promise<WatchEnd> {
  return new Promise((resolve) => {
    const state: WatchState = { rv: resourceVersion, expired: false };
    const query = watchQuery(options, resourceVersion);
    const path = options.path ?? '/api/v1/pods';
    let idle: NodeJS.Timeout | undefined;
    let settled = false;
    let streaming = false;
    const finish = (end: WatchEnd): void => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      request.destroy();
      resolve(end);
    };
    const touch = (): void => {
      clearTimeout(idle);
      idle = setTimeout(() => finish({ kind: 'ended', resourceVersion: state.rv }), options.idleMs);
    };
    const request = openKubeRequest(access, { method: 'GET', path, query, signal }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        finish(statusEnd(response, state.rv, path));
        return;
      }
      streaming = true;
      touch();
      const onLine = (line: string): void => {
        handleLine(line, sink, state);
        if (state.expired || state.error) finish(endOfState(state));
      };
      streamLines(response, onLine, touch);
      for (const event of ['end', 'error', 'close']) response.on(event, () => finish(endOfState(state)));
    });
    // A stream cut after it started is a dropped watch (resume from the last resourceVersion), not a failure.
    // No answer at all (headers) within the request timeout: a hung connection, not a quiet watch.
    const noAnswer = `watch ${path}: no answer within ${options.requestTimeoutMs} ms`;
    idle = setTimeout(() => finish(failedEnd(0, noAnswer, state.rv)), options.requestTimeoutMs);
    request.on('error', (error) =>
      finish(
        signal.aborted || streaming ? endOfState(state) : failedEnd(0, `watch ${path}: ${error.message}`, state.rv),
      ),
    );
    request.end();
  });
}
