import type { PodView } from './pod-view.js';

/**
 * Which run of a pod's validator was counted, finished with, or announced as held (by run id), and
 * which report was posted last: a pod restarting with the same reason is reported once.
 */
export interface RunMemory {
  counted?: string;
  done?: string;
  held?: string;
  reported?: string;
}

/**
 * The agent's view of its node's pods, by `namespace/name`, and what it remembers of each pod's
 * validator runs, by uid. A name that now belongs to a new pod (another uid) starts with no memory.
 */
export class PodCache {
  private readonly views = new Map<string, PodView>();
  private readonly runs = new Map<string, RunMemory>();

  get size(): number {
    return this.views.size;
  }

  get(key: string): PodView | undefined {
    return this.views.get(key);
  }

  all(): IterableIterator<PodView> {
    return this.views.values();
  }

  keys(): string[] {
    return [...this.views.keys()];
  }

  upsert(view: PodView): void {
    const previous = this.views.get(view.key);
    if (previous && previous.uid !== view.uid) this.runs.delete(previous.uid);
    this.views.set(view.key, view);
  }

  forget(key: string): void {
    const view = this.views.get(key);
    if (view) this.runs.delete(view.uid);
    this.views.delete(key);
  }

  /** The pod's run memory, made empty at first use. */
  memory(uid: string): RunMemory {
    let memory = this.runs.get(uid);
    if (!memory) this.runs.set(uid, (memory = {}));
    return memory;
  }

  /** The run the agent finished with for this pod, if any (no memory is made). */
  doneRun(uid: string): string | undefined {
    return this.runs.get(uid)?.done;
  }
}
