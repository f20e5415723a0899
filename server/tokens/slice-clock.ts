/**
 * Lets long CPU work share the event loop: the work runs in slices of a few milliseconds and yields
 * (`setImmediate`, so pending I/O such as a health check runs first) between them. Work that finishes
 * within one slice never yields: a normal call pays nothing.
 */
const SLICE_MS = 3;

export class SliceClock {
  private started = performance.now();

  /** Yields to the event loop if the current slice is used up. */
  async pause(): Promise<void> {
    if (performance.now() - this.started < SLICE_MS) {
      return;
    }
    await new Promise((resolve) => setImmediate(resolve));
    this.started = performance.now();
  }
}
