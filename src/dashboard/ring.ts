/** A fixed-capacity buffer that keeps the newest items: what a dashboard remembers is bounded. */
export class Ring<T> {
  private readonly items: T[] = [];
  private next = 0;

  constructor(readonly capacity: number) {}

  /** Add an item, pushing out the oldest when full. */
  push(item: T): void {
    if (this.items.length < this.capacity) this.items.push(item);
    else {
      this.items[this.next] = item;
      this.next = (this.next + 1) % this.capacity;
    }
  }

  /** The kept items, oldest first. */
  toArray(): T[] {
    return [...this.items.slice(this.next), ...this.items.slice(0, this.next)];
  }

  get size(): number {
    return this.items.length;
  }
}

/** The p-th percentile (0–100) of `values` by nearest rank; undefined when there are none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}
