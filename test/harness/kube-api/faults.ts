/** What a test makes the stand-in do to matching requests: fail, answer slowly, or cut a watch. */
export type Fault =
  | { readonly kind: 'status'; readonly code: 500 | 429 | 503 | 410 | 403; readonly retryAfterSeconds?: number }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'drop-watch'; readonly afterMs: number };

export interface FaultRule {
  readonly method?: string;
  /** Matched against the path (no query): `/api/v1/namespaces/ns/pods/name` or a prefix of it. */
  readonly path?: RegExp;
  /** Matched against the query string (`?limit=500&continue=...`). */
  readonly search?: RegExp;
  /** Only watch requests (watch=true), only non-watch requests, or both (default). */
  readonly watch?: boolean;
  readonly fault: Fault;
  /** How many requests it applies to; Infinity until cleared. */
  times: number;
}

export class Faults {
  private rules: FaultRule[] = [];

  add(rule: Omit<FaultRule, 'times'> & { times?: number }): void {
    this.rules.push({ ...rule, times: rule.times ?? Infinity });
  }

  clear(): void {
    this.rules = [];
  }

  /** The first rule matching the request, consumed once. */
  take(method: string, path: string, watch: boolean, search = ''): Fault | undefined {
    const rule = this.rules.find(
      (candidate) =>
        candidate.times > 0 &&
        (candidate.method === undefined || candidate.method === method) &&
        (candidate.path === undefined || candidate.path.test(path)) &&
        (candidate.search === undefined || candidate.search.test(search)) &&
        (candidate.watch === undefined || candidate.watch === watch),
    );
    if (!rule) return undefined;
    rule.times--;
    return rule.fault;
  }
}
