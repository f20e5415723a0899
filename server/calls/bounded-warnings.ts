/**
 * The warnings of one call ("accepted but not honoured"), logged with bounds: one line per field, field names
 * and reasons cut short, and at most MAX_WARNINGS lines per call, so a body with fifty thousand unknown
 * fields, or a field name of megabytes, costs a few log lines, not megabytes of log.
 */
import type { CallWarning } from '../core/call-context.js';
import { cutText } from '../core/quote-value.js';

const MAX_WARNINGS = 10;
const MAX_FIELD_CHARS = 64;
const MAX_REASON_CHARS = 300;

export function boundedWarnings(log: (field: string, reason: string) => void): (warning: CallWarning) => void {
  const warned = new Set<string>();
  let suppressed = 0;
  return (warning) => {
    const field = cutText(warning.field, MAX_FIELD_CHARS);
    if (warned.has(field)) {
      return;
    }
    if (warned.size < MAX_WARNINGS) {
      warned.add(field);
      log(field, cutText(warning.reason, MAX_REASON_CHARS));
    } else if (++suppressed === 1) {
      // One line says that more were dropped; the decoders already summarise unknown fields as one warning.
      log('(further fields)', `more than ${MAX_WARNINGS} warnings for this call; the rest are not logged`);
    }
  };
}
