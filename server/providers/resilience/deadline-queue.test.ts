/**
 * One timer per budget length (deadline-queue.ts): every waiter still queued expires, never before its own time,
 * in the order they came; one removed before its time (a call that committed) never does, and its removal does
 * not stop the timer for the others.
 */
import { describe, expect, it } from 'vitest';
import { DeadlineQueue, type Waiter } from './deadline-queue.js';

function waiter(name: string, expired: Array<{ name: string; early: boolean }>): Waiter {
  const self: Waiter = {
    expiresAt: 0,
    older: undefined,
    newer: undefined,
    queued: false,
    expire: () => expired.push({ name, early: performance.now() < self.expiresAt }),
  };
  return self;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('deadline queue', () => {
  it('expires the waiters still queued, in order and not early; removed ones never', async () => {
    const queue = new DeadlineQueue(25);
    const expired: Array<{ name: string; early: boolean }> = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => waiter(name, expired)) as [Waiter, Waiter, Waiter, Waiter];
    queue.add(a);
    await pause(5);
    queue.add(b);
    queue.add(c);
    await pause(5);
    queue.add(d);
    // The oldest commits (the timer was armed for it), and one in the middle too.
    queue.remove(a);
    queue.remove(c);
    queue.remove(c);
    await pause(80);
    expect(expired).toEqual([
      { name: 'b', early: false },
      { name: 'd', early: false },
    ]);
    expect([a, b, c, d].map((w) => w.queued)).toEqual([false, false, false, false]);
    // Removing one that already expired changes nothing; the queue is empty and takes new waiters.
    queue.remove(b);
    const e = waiter('e', expired);
    queue.add(e);
    await pause(60);
    expect(expired.map((entry) => entry.name)).toEqual(['b', 'd', 'e']);
  });
});
