/**
 * The retry layer's budgets, one timer per budget length instead of one per call (issue 31: a `setTimeout` and a
 * `clearTimeout` per call were a measurable part of its healthy-path cost). Calls of one budget length expire in
 * the order they started, so they wait in a list linked through the calls themselves (nothing allocated per call)
 * and one timer is armed for the oldest: when it fires, every call whose budget is spent expires and the timer is
 * armed again for the next. A call that commits leaves the list; the timer is not cleared for it, it just finds the
 * next call not due yet when it fires and moves on. Times are monotonic (`performance.now`), like timers'.
 *
 * The timer is unref'd: a pending call holds the process by its own I/O, and an empty list's last firing must not.
 */

/** What waits in the list: linked through its own fields. */
export interface Waiter {
  expiresAt: number;
  older: Waiter | undefined;
  newer: Waiter | undefined;
  queued: boolean;
  /** The budget is spent: abort the call's attempt. */
  expire(): void;
}

export class DeadlineQueue {
  private oldest: Waiter | undefined;
  private newest: Waiter | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly fire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    while (this.oldest && this.oldest.expiresAt <= now) {
      const due = this.oldest;
      this.remove(due);
      due.expire();
    }
    if (this.oldest) {
      this.arm(this.oldest.expiresAt - now);
    }
  };

  constructor(private readonly budgetMs: number) {}

  add(waiter: Waiter): void {
    waiter.expiresAt = performance.now() + this.budgetMs;
    waiter.older = this.newest;
    waiter.newer = undefined;
    waiter.queued = true;
    if (this.newest) {
      this.newest.newer = waiter;
    } else {
      this.oldest = waiter;
    }
    this.newest = waiter;
    if (!this.timer) {
      this.arm(this.budgetMs);
    }
  }

  remove(waiter: Waiter): void {
    if (!waiter.queued) {
      return;
    }
    waiter.queued = false;
    if (waiter.older) {
      waiter.older.newer = waiter.newer;
    } else {
      this.oldest = waiter.newer;
    }
    if (waiter.newer) {
      waiter.newer.older = waiter.older;
    } else {
      this.newest = waiter.older;
    }
    waiter.older = undefined;
    waiter.newer = undefined;
  }

  private arm(ms: number): void {
    // Timers count whole milliseconds: rounded up, so a firing never comes before the oldest is due.
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(ms)));
    this.timer.unref();
  }
}

const queues = new Map<number, DeadlineQueue>();

/** The queue of the calls whose budget is `budgetMs` (plans share it when their budgets are equal). */
export function deadlineQueue(budgetMs: number): DeadlineQueue {
  let queue = queues.get(budgetMs);
  if (!queue) {
    queue = new DeadlineQueue(budgetMs);
    queues.set(budgetMs, queue);
  }
  return queue;
}
