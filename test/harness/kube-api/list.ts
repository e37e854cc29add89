import { gone, statusOf, type StatusObject } from './status.js';
import { apiVersionOf, resourceInfo } from './resources.js';
import type { Store } from './store.js';
import type { KubeObject } from './types.js';
import { inScope, type Scope } from './watch.js';

interface ContinueToken {
  readonly rv: number;
  readonly after: string;
}

const keyOf = (object: KubeObject): string => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;

function decodeContinue(token: string): ContinueToken | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as ContinueToken;
    return typeof parsed.rv === 'number' && typeof parsed.after === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export interface ListQuery {
  readonly limit: number | undefined;
  readonly continueToken: string | null;
  readonly resourceVersion: string | null;
  readonly resourceVersionMatch: string | null;
}

/**
 * A list in chunks (`limit` + `continue`), sorted by namespace/name as etcd keys are. Every chunk
 * carries the first chunk's resourceVersion; a continue token older than the compacted history, or
 * an Exact read of a compacted resourceVersion, answers 410 Gone, as the API server does.
 */
export function serveList(store: Store, scope: Scope, query: ListQuery): { code: number; body: object | StatusObject } {
  let rv = store.resourceVersion;
  let after = '';
  if (query.continueToken) {
    const token = decodeContinue(query.continueToken);
    if (!token) return { code: 400, body: statusOf(400, 'BadRequest', 'continue key is not valid') };
    if (token.rv < store.oldestResumable - 1) {
      return {
        code: 410,
        body: statusOf(
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
        ),
      };
    }
    rv = token.rv;
    after = token.after;
  } else if (
    query.resourceVersionMatch === 'Exact' &&
    query.resourceVersion &&
    Number(query.resourceVersion) < store.oldestResumable - 1
  ) {
    // Only an exact read of a compacted version is Gone; "not older than" (the default) is served current data.
    return { code: 410, body: gone(query.resourceVersion) };
  }
  const all = store
    .list(scope.resource)
    .filter((object) => inScope(scope, object) && keyOf(object) > after)
    .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));
  const items = query.limit && query.limit > 0 ? all.slice(0, query.limit) : all;
  const remaining = all.length - items.length;
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (remaining > 0) {
    metadata.continue = Buffer.from(JSON.stringify({ rv, after: keyOf(items[items.length - 1]!) })).toString(
      'base64url',
    );
    metadata.remainingItemCount = remaining;
  }
  const info = resourceInfo(scope.resource);
  const kind = `${info?.kind ?? 'Unknown'}List`;
  return { code: 200, body: { kind, apiVersion: info ? apiVersionOf(info) : 'v1', metadata, items } };
}
