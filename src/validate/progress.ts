/** The phases of one validation, in order; the rules read and the probe run together. */
export type Phase = 'start' | 'pod network' | 'probe plan' | 'rules read and probe' | 'verdict' | 'report';

/**
 * Where a validation is, and what it still waits for: what a deadline or a signal that ends the
 * run early reports, naming the phase and every pending item instead of a bare "timed out".
 */
export class Progress {
  private current: Phase = 'start';
  private readonly waiting = new Map<number, string>();
  private next = 0;

  enter(phase: Phase): void {
    this.current = phase;
  }

  /** Something the run now waits for; the function returned says it arrived. */
  pending(what: string): () => void {
    const id = this.next++;
    this.waiting.set(id, what);
    return () => this.waiting.delete(id);
  }

  get phase(): Phase {
    return this.current;
  }

  /** `the "probe" phase, waiting for the IPv4 probe to 192.0.2.1:20001, the rules read` */
  describe(): string {
    const items = [...this.waiting.values()];
    return `the "${this.current}" phase${items.length > 0 ? `, waiting for ${items.join(', ')}` : ''}`;
  }
}
