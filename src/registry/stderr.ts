/**
 * The last lines an upstream wrote to stderr, bounded: a server that floods stderr costs at most
 * `capacity` lines of memory, and what was pushed out is counted, not kept.
 */
export class StderrRing {
  private readonly lines: string[] = [];
  private next = 0;
  private total = 0;

  constructor(private readonly capacity = 200) {}

  push(line: string): void {
    this.total += 1;
    if (this.lines.length < this.capacity) this.lines.push(line);
    else {
      this.lines[this.next] = line;
      this.next = (this.next + 1) % this.capacity;
    }
  }

  /** The kept lines, oldest first. */
  tail(): string[] {
    return [...this.lines.slice(this.next), ...this.lines.slice(0, this.next)];
  }

  /** Lines seen in all, and how many of them were dropped to stay within capacity. */
  counts(): { total: number; dropped: number } {
    return { total: this.total, dropped: this.total - this.lines.length };
  }
}
