import { describe, expect, it } from 'vitest';
import { jsonText, stringifyWithoutRecursion } from './json-text.js';

describe('jsonText', () => {
  it('writes what JSON.stringify writes, without recursion', () => {
    const value = {
      a: [1, 'two', null, true, { b: 'c"d' }],
      e: {},
      f: [],
      g: undefined,
      'h i': -1.5e-7,
      j: [undefined],
    };
    expect(stringifyWithoutRecursion(value)).toBe(JSON.stringify(value));
  });

  it('writes a value nested 100,000 levels deep instead of overflowing the stack', () => {
    let value: unknown = 'leaf';
    for (let i = 0; i < 100_000; i += 1) {
      value = i % 2 ? { a: value } : [value];
    }
    const text = jsonText(value);
    // Per two levels `{"a":` + `}` and `[` + `]`: 8 chars; `"leaf"` is 6.
    expect(text.length).toBe(50_000 * 8 + 6);
    expect(text.startsWith('{"a":[{"a":[')).toBe(true);
  });
});
