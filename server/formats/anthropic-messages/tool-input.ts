/**
 * Tool-call arguments between their canonical form (JSON text exactly as produced) and Anthropic's `input`
 * (a JSON object).
 *
 * Anthropic requires `input` to be an object. Empty arguments (a tool without parameters, as some OpenAI-style
 * upstreams send them) become `{}`. Arguments that are not a JSON object — truncated JSON after `max_tokens`,
 * say — are kept, not dropped, as `{"_raw": "<the text>"}`: the caller's schema check then fails visibly and the
 * model sees what it produced when the turn is replayed, instead of a silent `{}` that looks like a valid call.
 * The built-in model and Anthropic itself always produce valid objects, so this only matters for other upstreams.
 */

export const RAW_ARGUMENTS_KEY = '_raw';

export function toolInputFromArguments(argumentsText: string): Record<string, unknown> {
  if (argumentsText.trim() === '') {
    return {};
  }
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // Not JSON: fall through and keep the text.
  }
  return { [RAW_ARGUMENTS_KEY]: argumentsText };
}

/** `input` as JSON text; a missing or null input is `{}` so the canonical arguments always parse. */
export function argumentsFromToolInput(input: unknown): string {
  return JSON.stringify(input ?? {});
}
