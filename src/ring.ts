/** A bounded buffer that keeps the newest items (a leaf: the registry and the dashboard use it). */
/** A fixed-capacity buffer that keeps the newest items: what is remembered stays bounded. */
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
