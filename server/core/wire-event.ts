/**
 * One event of a streamed answer as a codec produces it: an optional SSE event name and the data (an object
 * to serialise, or a string sent as is). `http/sse.ts` frames it; codecs never write `data:` lines.
 */
export interface WireEvent {
  event?: string;
  data: unknown;
}
