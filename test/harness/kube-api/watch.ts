import type { ServerResponse } from 'node:http';
import { apiVersionOf, resourceInfo } from './resources.js';
import { gone } from './status.js';
import { matchesFields, matchesLabels, parseSelector } from './selectors.js';
import type { Store } from './store.js';
import type { Change, KubeObject, Resource } from './types.js';

export interface Scope {
  readonly resource: Resource;
  readonly namespace: string | undefined;
  readonly fieldSelector: string | null;
  readonly labelSelector: string | null;
}

export function inScope(scope: Scope, object: KubeObject): boolean {
  return (
    (scope.namespace === undefined || object.metadata.namespace === scope.namespace) &&
    matchesFields(object, parseSelector(scope.fieldSelector)) &&
    matchesLabels(object, parseSelector(scope.labelSelector))
  );
}

/**
 * What a field-selected watch sees of a change, as the API server's filter does: an object that
 * starts matching is ADDED, one that stops matching is DELETED.
 */
function seen(scope: Scope, change: Change): { type: string; object: KubeObject } | undefined {
  if (change.resource !== scope.resource) return undefined;
  const now = inScope(scope, change.object);
  const before = change.previous ? inScope(scope, change.previous) : false;
  if (change.type === 'MODIFIED') {
    if (now && before) return { type: 'MODIFIED', object: change.object };
    if (now) return { type: 'ADDED', object: change.object };
    if (before) return { type: 'DELETED', object: change.object };
    return undefined;
  }
  return now ? { type: change.type, object: change.object } : undefined;
}

export interface WatchOptions {
  readonly resourceVersion: string | null;
  readonly bookmarks: boolean;
  readonly bookmarkMs: number;
  readonly timeoutSeconds: number | undefined;
}

/**
 * A watch stream: one JSON event per line, chunked. An unset or "0" resourceVersion starts with
 * synthetic ADDED events for the current state; a compacted one gets an ERROR event with a 410
 * Status, and the stream ends.
 */
export function serveWatch(store: Store, scope: Scope, options: WatchOptions, res: ServerResponse): () => void {
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  const send = (type: string, object: unknown): void => {
    res.write(`${JSON.stringify({ type, object })}\n`);
  };
  const info = resourceInfo(scope.resource);
  const withKind = (object: KubeObject): KubeObject => ({
    apiVersion: info ? apiVersionOf(info) : 'v1',
    kind: info?.kind,
    ...object,
  });
  const rv = options.resourceVersion;
  if (rv === null || rv === '' || rv === '0') {
    for (const object of store.list(scope.resource).filter((candidate) => inScope(scope, candidate)))
      send('ADDED', withKind(object));
  } else {
    const changes = store.since(Number(rv));
    if (changes === undefined || !/^\d+$/.test(rv)) {
      send('ERROR', gone(rv));
      res.end();
      return () => undefined;
    }
    for (const change of changes) {
      const event = seen(scope, change);
      if (event) send(event.type, withKind(event.object));
    }
  }
  const unsubscribe = store.subscribe((change) => {
    const event = seen(scope, change);
    if (event) send(event.type, withKind(event.object));
  });
  const bookmark = options.bookmarks
    ? setInterval(
        () =>
          send('BOOKMARK', {
            kind: info?.kind,
            apiVersion: info ? apiVersionOf(info) : 'v1',
            metadata: {
              resourceVersion: String(store.resourceVersion),
              annotations: { 'k8s.io/initial-events-end': 'true' },
            },
          }),
        options.bookmarkMs,
      )
    : undefined;
  const timeout = options.timeoutSeconds ? setTimeout(() => res.end(), options.timeoutSeconds * 1000) : undefined;
  const stop = (): void => {
    unsubscribe();
    clearInterval(bookmark);
    clearTimeout(timeout);
  };
  res.on('close', stop);
  return stop;
}
