/**
 * Tool-call arguments as the JSON text the canonical core carries. Upstreams send a string; a few (Ollama's
 * older OpenAI layer, some proxies) send the parsed object, which is serialised back.
 */
export function toolCallArgumentsText(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  if (value === undefined || value === null) {
    return '';
  }
  return JSON.stringify(value);
}
