import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { API_GROUP_LIST, apiVersions, CORE_V1_RESOURCES, resourceList, VERSION_INFO } from './discovery.js';
import { openApiDocument, openApiRoot } from './openapi.js';
import { Faults, type Fault } from './faults.js';
import { serveList } from './list.js';
import { resourceInfo } from './resources.js';
import {
  createObject,
  deleteObject,
  dryRunCreate,
  getObject,
  patchObject,
  serverSideApply,
  type Answer,
} from './objects.js';
import { routeOf, type Route } from './route.js';
import { statusOf } from './status.js';
import { eventTable, wantsTable } from './table.js';
import { Store } from './store.js';
import { writeChecks } from './write-checks.js';
import type { KubeObject } from './types.js';
import { serveWatch } from './watch.js';
import { terminateNamespace } from './namespace-lifecycle.js';

/** One request as the stand-in saw it: tests count retries and actions from this log. */
export interface RequestRecord {
  readonly at: number;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly status: number;
  readonly watch: boolean;
  readonly body: unknown;
}

export interface KubeApiOptions {
  readonly bookmarkMs?: number;
  readonly historyLimit?: number;
  /**
   * The NamespaceLifecycle admission plugin: a namespaced object is created only in an existing
   * namespace (`default` and `kube-system` exist from the start), as on a real cluster.
   */
  readonly namespaceLifecycle?: boolean;
  /**
   * With namespaceLifecycle: how long a deleted Namespace stays Terminating before everything in
   * it, then the Namespace, is removed (default 1500 ms; kubectl delete waits for it).
   */
  readonly namespaceFinalizeMs?: number;
  /**
   * API groups this cluster does not serve (their CRDs are not installed): `cert-manager.io` for a
   * cluster without cert-manager. Discovery leaves them out and their paths answer 404.
   */
  readonly withoutGroups?: readonly string[];
  /** Listen address (default 127.0.0.1) and port (default 0: a free one). */
  readonly host?: string;
  readonly port?: number;
}

export interface KubeApi {
  readonly url: string;
  readonly store: Store;
  readonly faults: Faults;
  readonly requests: RequestRecord[];
  /** Requests as they arrive (before any fault or answer): `method path`. */
  readonly arrivals: string[];
  /** Cuts every open watch stream at once, as a load balancer or a restarted API server does. */
  dropWatches(): void;
  close(): Promise<void>;
}

function reply(res: ServerResponse, answer: Answer, headers: Record<string, string> = {}): void {
  res.writeHead(answer.code, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(answer.body));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  return JSON.parse(text);
}

const NOT_FOUND: Answer = {
  code: 404,
  body: statusOf(404, 'NotFound', 'the server could not find the requested resource'),
};

function discovery(
  route: Extract<Route, { kind: 'discovery' | 'group-version' | 'openapi' }>,
  host: string,
  without: readonly string[],
): Answer {
  const served = (key: string) => !without.some((group) => key.startsWith(`apis/${group}/`) || key === group);
  if (route.kind === 'group-version' && without.includes(route.group)) return NOT_FOUND;
  if (route.kind === 'openapi' && route.groupVersion !== undefined && !served(route.groupVersion)) return NOT_FOUND;
  if (route.kind === 'openapi' && route.groupVersion === undefined) {
    const root = openApiRoot() as { paths: Record<string, unknown> };
    return {
      code: 200,
      body: { paths: Object.fromEntries(Object.entries(root.paths).filter(([key]) => served(key))) },
    };
  }
  if (route.kind === 'discovery' && route.document === 'apis')
    return {
      code: 200,
      body: { ...API_GROUP_LIST, groups: API_GROUP_LIST.groups.filter((group) => !without.includes(group.name)) },
    };
  if (route.kind === 'group-version') {
    const list = resourceList(route.group, route.version);
    return list ? { code: 200, body: list } : NOT_FOUND;
  }
  if (route.kind === 'openapi') {
    const document = route.groupVersion === undefined ? openApiRoot() : openApiDocument(route.groupVersion);
    return document ? { code: 200, body: document } : NOT_FOUND;
  }
  const documents = { version: VERSION_INFO, api: apiVersions(host), apis: API_GROUP_LIST, v1: CORE_V1_RESOURCES };
  return { code: 200, body: documents[route.document] };
}

function handleObject(
  store: Store,
  route: Extract<Route, { kind: 'object' }>,
  req: IncomingMessage,
  body: unknown,
  query: URLSearchParams,
): Answer {
  const { resource, namespace, name } = route;
  const contentType = req.headers['content-type'] ?? '';
  const dryRun = query.has('dryRun');
  if (req.method === 'PATCH' && contentType.startsWith('application/apply-patch'))
    return serverSideApply(store, resource, namespace, name, body as KubeObject, dryRun);
  switch (req.method) {
    case 'GET':
      return getObject(store, resource, namespace, name);
    case 'DELETE':
      return deleteObject(
        store,
        resource,
        namespace,
        name,
        body as { preconditions?: { uid?: string; resourceVersion?: string } },
      );
    case 'PATCH':
      return patchObject(store, resource, namespace, name, contentType, body, route.status, dryRun);
    default:
      return {
        code: 405,
        body: statusOf(405, 'MethodNotAllowed', `${req.method} is not supported on ${resource}/${name}`),
      };
  }
}

function faultAnswer(fault: Extract<Fault, { kind: 'status' }>, res: ServerResponse): void {
  const headers: Record<string, string> =
    fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
  const reasons = {
    429: 'TooManyRequests',
    503: 'ServiceUnavailable',
    500: 'InternalError',
    410: 'Expired',
    403: 'Forbidden',
  } as const;
  const reason = reasons[fault.code];
  const details = fault.retryAfterSeconds !== undefined ? { retryAfterSeconds: fault.retryAfterSeconds } : undefined;
  reply(res, { code: fault.code, body: statusOf(fault.code, reason, `injected ${fault.code}`, details) }, headers);
}

interface Context {
  readonly store: Store;
  readonly faults: Faults;
  readonly requests: RequestRecord[];
  readonly arrivals: string[];
  readonly watches: Set<ServerResponse>;
  readonly options: KubeApiOptions;
}

async function handle(context: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://stand-in');
  const query = url.searchParams;
  const watch = query.get('watch') === 'true' || query.get('watch') === '1';
  let body: unknown;
  try {
    body = await readBody(req);
  } catch {
    body = null;
  }
  const record = { at: Date.now(), method: req.method ?? 'GET', path: url.pathname, query, watch, body };
  context.arrivals.push(`${record.method} ${url.pathname}${watch ? ' watch' : ''}`);
  res.on('finish', () => context.requests.push({ ...record, status: res.statusCode }));
  // A request cut off before its answer (a dropped watch, a broken client) is logged with status 0.
  res.on('close', () => {
    if (!res.writableFinished)
      context.requests.push({ ...record, status: res.headersSent && watch ? res.statusCode : 0 });
  });
  const fault = context.faults.take(record.method, url.pathname, watch, url.search);
  if (fault?.kind === 'status') return faultAnswer(fault, res);
  if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
  if (body === null)
    return reply(res, { code: 400, body: statusOf(400, 'BadRequest', 'the request body is not JSON') });
  const route = routeOf(url.pathname);
  if (!route)
    return reply(res, {
      code: 404,
      body: statusOf(404, 'NotFound', 'the server could not find the requested resource'),
    });
  if (route.kind === 'discovery' || route.kind === 'group-version' || route.kind === 'openapi')
    return reply(res, discovery(route, req.headers.host ?? '', context.options.withoutGroups ?? []));
  if ((context.options.withoutGroups ?? []).includes(resourceInfo(route.resource)?.group ?? ''))
    return reply(res, NOT_FOUND);
  const checked = writeChecks(context, route, req, body, query);
  if (checked.answer) return reply(res, checked.answer);
  if (checked.warnings.length > 0)
    res.setHeader(
      'warning',
      checked.warnings.map((text) => `299 - ${JSON.stringify(text)}`),
    );
  if (
    route.kind === 'object' &&
    route.resource === 'namespaces' &&
    req.method === 'DELETE' &&
    context.options.namespaceLifecycle
  )
    return reply(res, terminateNamespace(context.store, route.name, context.options.namespaceFinalizeMs ?? 1500));
  if (route.kind === 'object') return reply(res, handleObject(context.store, route, req, body, query));
  const scope = {
    resource: route.resource,
    namespace: route.namespace,
    fieldSelector: query.get('fieldSelector'),
    labelSelector: query.get('labelSelector'),
  };
  if (req.method === 'POST')
    return reply(
      res,
      query.has('dryRun')
        ? dryRunCreate(context.store, route.resource, route.namespace, body as KubeObject)
        : createObject(context.store, route.resource, route.namespace, body as KubeObject),
    );
  if (watch) {
    context.watches.add(res);
    res.on('close', () => context.watches.delete(res));
    if (fault?.kind === 'drop-watch') setTimeout(() => res.destroy(), fault.afterMs);
    const timeout = query.get('timeoutSeconds');
    serveWatch(
      context.store,
      scope,
      {
        resourceVersion: query.get('resourceVersion'),
        bookmarks: query.get('allowWatchBookmarks') === 'true',
        bookmarkMs: context.options.bookmarkMs ?? 1000,
        timeoutSeconds: timeout ? Number(timeout) : undefined,
      },
      res,
    );
    return;
  }
  const limit = query.get('limit');
  const listed = serveList(context.store, scope, {
    limit: limit ? Number(limit) : undefined,
    continueToken: query.get('continue'),
    resourceVersion: query.get('resourceVersion'),
    resourceVersionMatch: query.get('resourceVersionMatch'),
  });
  if (listed.code === 200 && route.resource === 'events' && wantsTable(req.headers.accept)) {
    return reply(res, {
      code: 200,
      body: eventTable(listed.body as { metadata: Record<string, unknown>; items: KubeObject[] }, Date.now()),
    });
  }
  return reply(res, listed);
}

/** Starts the stand-in on loopback, on a free port. */
export async function startKubeApi(options: KubeApiOptions = {}): Promise<KubeApi> {
  const context: Context = {
    store: new Store(options.historyLimit),
    faults: new Faults(),
    requests: [],
    arrivals: [],
    watches: new Set(),
    options,
  };
  const server = createServer((req, res) => {
    handle(context, req, res).catch((error: unknown) => {
      if (!res.headersSent) reply(res, { code: 500, body: statusOf(500, 'InternalError', String(error)) });
      else res.destroy();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    store: context.store,
    faults: context.faults,
    requests: context.requests,
    arrivals: context.arrivals,
    dropWatches: () => {
      for (const res of context.watches) res.destroy();
    },
    close: async () => {
      for (const res of context.watches) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
