import { describe, expect, it } from 'vitest';
import { randomId, timeOrderedId } from './random-id.js';

describe('random ids', () => {
  it('randomId is the prefix and 32 hex characters, different each time', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => randomId('req')));
    expect(ids.size).toBe(1000);
    for (const id of ids) {
      expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    }
  });

  it('timeOrderedId keeps that shape and sorts as text in the order of its times', () => {
    const start = Date.UTC(2026, 10, 24);
    const times = [
      start,
      start + 1,
      start + 15,
      start + 16,
      start + 255,
      start + 256,
      start + 86_400_000,
      Date.UTC(2100, 0, 1),
    ];
    const ids = times.map((time) => timeOrderedId('req', time));
    for (const id of ids) {
      expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    }
    expect([...ids].reverse().sort()).toEqual(ids);
    expect(ids[0]!.slice(4, 16)).toBe(start.toString(16).padStart(12, '0'));
  });

  it('timeOrderedId ids made in the same millisecond still differ', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => timeOrderedId('req', 1_795_000_000_000)));
    expect(ids.size).toBe(1000);
  });
});
