import { Ring } from "../ring.js";

/**
 * The last lines an upstream wrote to stderr, bounded: a server that floods stderr costs at most
 * `capacity` lines of memory, and what was pushed out is counted, not kept.
 */
export class StderrRing {
  private readonly lines: Ring<string>;
  private total = 0;

  constructor(capacity = 200) {
    this.lines = new Ring(capacity);
  }

  push(line: string): void {
    this.total += 1;
    this.lines.push(line);
  }

  /** The kept lines, oldest first. */
  tail(): string[] {
    return this.lines.toArray();
  }

  /** Lines seen in all, and how many of them were dropped to stay within capacity. */
  counts(): { total: number; dropped: number } {
    return { total: this.total, dropped: this.total - this.lines.size };
  }
}
