/**
 * The pool's waiting line: one FIFO queue per owner (an API key), taken round-robin across owners. An owner
 * whose queue is empty joins the rotation at its end when it queues again, and an owner that was just served
 * goes to the end, so a job waits behind at most one job of each owner already queued, however many that owner
 * queued. The rotation is the Map's insertion order.
 */
export class FairQueue<T> {
  private readonly byOwner = new Map<string, T[]>();
  private count = 0;

  /** Jobs waiting, across owners. */
  get size(): number {
    return this.count;
  }

  /** Owners with at least one job waiting. */
  get owners(): number {
    return this.byOwner.size;
  }

  /** Jobs one owner has waiting. */
  queuedBy(owner: string): number {
    return this.byOwner.get(owner)?.length ?? 0;
  }

  push(owner: string, item: T): void {
    const queue = this.byOwner.get(owner);
    if (queue) {
      queue.push(item);
    } else {
      this.byOwner.set(owner, [item]);
    }
    this.count += 1;
  }

  /** The first job of the owner whose turn it is; that owner moves to the end of the rotation. */
  shift(): T | undefined {
    const next = this.byOwner.entries().next();
    if (next.done) {
      return undefined;
    }
    const [owner, queue] = next.value;
    const item = queue.shift() as T;
    this.byOwner.delete(owner);
    if (queue.length > 0) {
      this.byOwner.set(owner, queue);
    }
    this.count -= 1;
    return item;
  }

  /** Takes a job out of the line (its caller left); false when it was not waiting. */
  remove(owner: string, item: T): boolean {
    const queue = this.byOwner.get(owner);
    const index = queue?.indexOf(item) ?? -1;
    if (!queue || index < 0) {
      return false;
    }
    queue.splice(index, 1);
    if (queue.length === 0) {
      this.byOwner.delete(owner);
    }
    this.count -= 1;
    return true;
  }

  /** Empties the line, returning every job in it. */
  drain(): T[] {
    const all = [...this.byOwner.values()].flat();
    this.byOwner.clear();
    this.count = 0;
    return all;
  }
}
