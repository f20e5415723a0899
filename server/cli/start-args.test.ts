import { describe, expect, it } from 'vitest';
import { startWorkers } from './start-args.js';

describe('startWorkers', () => {
  it.each([
    [[], undefined],
    [['--workers', '2'], '2'],
    [['--workers=auto'], 'auto'],
    [['--workers'], null],
    [['--workers='], null],
    [['--workers', '2', 'extra'], null],
    [['--port', '80'], null],
  ])('%j gives %j', (args, want) => {
    expect(startWorkers(args)).toBe(want);
  });
});
