/**
 * Carries opaque reasoning state through the Responses item `reasoning.encrypted_content`.
 *
 * A Responses caller can only hand reasoning back to us as a reasoning item, and with `store: false` (Codex)
 * nothing is kept server-side. `encrypted_content` is the one opaque field that caller replays untouched, so
 * Anthropic's thinking `signature` and `redacted_thinking` data travel in it behind a marker prefix; without
 * them Anthropic rejects replayed thinking in a tool-use loop. A real Responses `encrypted_content` (from an
 * OpenAI upstream) goes through unchanged.
 */
import type { ReasoningPart } from '../../core/chat.js';

const SIGNATURE_PREFIX = 'omnigate.anthropic-signature:';
const REDACTED_PREFIX = 'omnigate.anthropic-redacted:';

type OpaqueReasoning = Pick<ReasoningPart, 'signature' | 'redactedData' | 'encryptedContent'>;

/** The `encrypted_content` to emit for a reasoning part, or undefined when it has no opaque state. */
export function encryptedContentOf(reasoning: OpaqueReasoning): string | undefined {
  if (reasoning.encryptedContent) {
    return reasoning.encryptedContent;
  }
  if (reasoning.redactedData) {
    return REDACTED_PREFIX + reasoning.redactedData;
  }
  if (reasoning.signature) {
    return SIGNATURE_PREFIX + reasoning.signature;
  }
  return undefined;
}

/** The canonical opaque fields an `encrypted_content` a caller sent back stands for. */
export function opaqueReasoningFrom(encryptedContent: string | null | undefined): OpaqueReasoning {
  if (!encryptedContent) {
    return {};
  }
  if (encryptedContent.startsWith(SIGNATURE_PREFIX)) {
    return { signature: encryptedContent.slice(SIGNATURE_PREFIX.length) };
  }
  if (encryptedContent.startsWith(REDACTED_PREFIX)) {
    return { redactedData: encryptedContent.slice(REDACTED_PREFIX.length) };
  }
  return { encryptedContent };
}
