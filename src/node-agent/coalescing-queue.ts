/**
 * A bounded work queue keyed by pod: a key already waiting is updated in place (its newest state
 * wins, its place in line is kept), so a pod that changes 100 times costs one slot. When the queue
 * is full a new key is refused, never dropped silently: the caller records the overflow and
 * rescans its cache once there is room, so the work is delayed, not lost.
 */
export class CoalescingQueue<T> {
  private readonly items = new Map<string, T>();
  private overflowed = false;

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.items.size;
  }
  /** True once a key was refused since the last `takeOverflow`. */
  get hasOverflowed(): boolean {
    return this.overflowed;
  }

  /** 'queued', 'coalesced', or 'full' (refused: the caller must come back for it). */
  offer(key: string, item: T): 'queued' | 'coalesced' | 'full' {
    if (this.items.has(key)) {
      this.items.set(key, item);
      return 'coalesced';
    }
    if (this.items.size >= this.capacity) {
      this.overflowed = true;
      return 'full';
    }
    this.items.set(key, item);
    return 'queued';
  }

  take(): [string, T] | undefined {
    const first = this.items.entries().next();
    if (first.done) return undefined;
    this.items.delete(first.value[0]);
    return first.value;
  }

  /** Clears the overflow mark and says whether there was one: time to rescan. */
  takeOverflow(): boolean {
    const was = this.overflowed;
    this.overflowed = false;
    return was;
  }
}
