/**
 * A line of waiting work shared by many callers, served round robin: each caller has its own
 * line, and the next item comes from the caller served least recently (a newcomer first), so a
 * caller with a hundred items waiting delays another's first item by at most one item per
 * caller, never by its own hundred.
 */
export class FairQueue<T> {
  private readonly lines = new Map<string, T[]>();
  /** When each caller was last served (a counter); the oldest entries are forgotten first. */
  private readonly served = new Map<string, number>();
  private tick = 0;

  /** `remember`: callers whose last turn is kept, so one that comes back is not first again. */
  constructor(private readonly remember = 1024) {}

  push(key: string, item: T): void {
    const line = this.lines.get(key);
    if (line) line.push(item);
    else this.lines.set(key, [item]);
  }

  /**
   * The next item from the caller served least recently among those for which `eligible` holds
   * (all by default); items for which `live` is false (cancelled while waiting) are dropped.
   */
  shift(
    eligible: (key: string) => boolean = () => true,
    live: (item: T) => boolean = () => true,
  ): T | undefined {
    for (;;) {
      let next: string | undefined;
      for (const key of this.lines.keys()) {
        if (!eligible(key)) continue;
        if (next === undefined || (this.served.get(key) ?? 0) < (this.served.get(next) ?? 0)) {
          next = key;
        }
      }
      if (next === undefined) return undefined;
      const line = this.lines.get(next)!;
      const item = line.shift();
      if (line.length === 0) this.lines.delete(next);
      if (item === undefined || !live(item)) continue;
      this.served.delete(next);
      this.served.set(next, ++this.tick);
      if (this.served.size > this.remember) this.served.delete(this.served.keys().next().value!);
      return item;
    }
  }

  /** Items waiting: a caller's, or everyone's. */
  count(key?: string, live: (item: T) => boolean = () => true): number {
    const lines = key === undefined ? [...this.lines.values()] : [this.lines.get(key) ?? []];
    return lines.reduce((n, line) => n + line.filter(live).length, 0);
  }

  /** Callers with items waiting. */
  keys(): string[] {
    return [...this.lines.keys()];
  }

  /** Every item, leaving the queue empty. */
  drain(): T[] {
    const all = [...this.lines.values()].flat();
    this.lines.clear();
    return all;
  }
}
