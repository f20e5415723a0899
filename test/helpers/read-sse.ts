/** Parses an SSE body into events with eventsource-parser, the same parser a real client would use. */
import { createParser } from 'eventsource-parser';

export interface ParsedEvent {
  event?: string;
  data: string;
}

export function readSse(text: string): ParsedEvent[] {
  const events: ParsedEvent[] = [];
  const parser = createParser({ onEvent: (event) => events.push({ event: event.event, data: event.data }) });
  parser.feed(text);
  return events;
}

/** The JSON payloads of the events, with the `[DONE]` terminator (if any) left out. */
export function sseJson(text: string): Array<{ event?: string; data: Record<string, unknown> }> {
  return readSse(text)
    .filter((event) => event.data !== '[DONE]')
    .map((event) => ({ event: event.event, data: JSON.parse(event.data) as Record<string, unknown> }));
}
