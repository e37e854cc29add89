import { randomUUID } from 'node:crypto';
import type { Change, KubeObject, Resource, WatchType } from './types.js';

const keyOf = (object: KubeObject): string => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;

/**
 * The stand-in's etcd: one resourceVersion counter for every resource, the current objects, and a
 * bounded history of changes that watches resume from. Changes older than the history are
 * "compacted": asking for them answers 410 Gone, as a real API server does after etcd compaction.
 */
export class Store {
  private rv = 1;
  private readonly objects = new Map<Resource, Map<string, KubeObject>>();
  private readonly history: Change[] = [];
  private compactedBelow = 1;
  private readonly listeners = new Set<(change: Change) => void>();

  constructor(private readonly historyLimit = 10_000) {}

  get resourceVersion(): number {
    return this.rv;
  }
  /** The oldest resourceVersion a watch or list may still start from. */
  get oldestResumable(): number {
    return this.compactedBelow;
  }

  list(resource: Resource): KubeObject[] {
    return [...(this.objects.get(resource)?.values() ?? [])];
  }

  get(resource: Resource, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(resource)?.get(`${namespace ?? ''}/${name}`);
  }

  /** Creates or replaces an object; a new object gets a uid and creationTimestamp as the server gives them. */
  put(resource: Resource, object: KubeObject): KubeObject {
    const table = this.table(resource);
    const previous = table.get(keyOf(object));
    const stored = structuredClone(object);
    stored.metadata.uid = stored.metadata.uid ?? previous?.metadata.uid ?? randomUUID();
    stored.metadata.creationTimestamp =
      stored.metadata.creationTimestamp ??
      previous?.metadata.creationTimestamp ??
      new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    this.record(previous ? 'MODIFIED' : 'ADDED', resource, stored, previous);
    table.set(keyOf(stored), stored);
    return stored;
  }

  remove(resource: Resource, namespace: string | undefined, name: string): KubeObject | undefined {
    const table = this.table(resource);
    const previous = table.get(`${namespace ?? ''}/${name}`);
    if (!previous) return undefined;
    table.delete(keyOf(previous));
    const removed = structuredClone(previous);
    this.record('DELETED', resource, removed);
    return removed;
  }

  /** Changes after `rv`, or undefined when they were compacted away (the caller answers 410). */
  since(rv: number): Change[] | undefined {
    if (rv + 1 < this.compactedBelow) return undefined;
    return this.history.filter((change) => change.rv > rv);
  }

  /** Forgets every change so far: any older resourceVersion now answers 410 Gone. */
  compact(): void {
    this.history.length = 0;
    this.compactedBelow = this.rv + 1;
  }

  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Bumps the resourceVersion with no change, as writes to other resources do on a real server. */
  bump(): number {
    return ++this.rv;
  }

  private table(resource: Resource): Map<string, KubeObject> {
    let table = this.objects.get(resource);
    if (!table) this.objects.set(resource, (table = new Map()));
    return table;
  }

  private record(type: WatchType, resource: Resource, object: KubeObject, previous?: KubeObject): void {
    const rv = ++this.rv;
    object.metadata.resourceVersion = String(rv);
    const change: Change = { rv, type, resource, object, ...(previous ? { previous } : {}) };
    this.history.push(change);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedBelow = dropped[dropped.length - 1]!.rv + 1;
    }
    for (const listener of this.listeners) listener(change);
  }
}
