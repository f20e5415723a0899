import { describe, expect, it } from 'vitest';
import { frame } from './sse.js';

describe('SSE framing', () => {
  it('frames one-line data as one data line, with or without an event name', () => {
    expect(frame(undefined, '{"a":1}')).toBe('data: {"a":1}\n\n');
    expect(frame('message_start', '{"a":1}')).toBe('event: message_start\ndata: {"a":1}\n\n');
  });

  it('splits data at LF, CRLF and CR so a payload cannot end the event or inject a frame', () => {
    expect(frame(undefined, 'one\ntwo\r\nthree\rfour')).toBe('data: one\ndata: two\ndata: three\ndata: four\n\n');
    expect(frame(undefined, 'x\n\nevent: forged')).toBe('data: x\ndata: \ndata: event: forged\n\n');
  });

  it('refuses an event name with CR or LF', () => {
    expect(() => frame('a\nb', '{}')).toThrow(/CR or LF/);
  });
});
