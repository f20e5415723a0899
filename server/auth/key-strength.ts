/**
 * Why an operator-chosen key (OMNIGATE_API_KEYS) is easy to guess, checked at start so the operator hears it.
 * The hash at rest is keyed (storage/pepper.ts), but a guessable key is still guessable over HTTP and by anyone
 * who has both the database and the data directory's pepper. Generated keys are 32 random base64url characters.
 */

const MIN_LENGTH = 20;
const MIN_DISTINCT_CHARACTERS = 10;
/** Words and runs that make up most chosen passwords; matched anywhere in the key, case-insensitively. */
const COMMON = [
  'password',
  'passwd',
  'secret',
  'changeme',
  'letmein',
  'admin',
  'qwerty',
  'test',
  'default',
  'example',
  '123456',
  'abcdef',
];

/** The reasons `secret` is weak, or none; the reasons never contain the key. */
export function keyWeaknesses(secret: string): string[] {
  const reasons: string[] = [];
  if (secret.length < MIN_LENGTH) {
    reasons.push(`shorter than ${MIN_LENGTH} characters`);
  }
  if (new Set(secret).size < MIN_DISTINCT_CHARACTERS) {
    reasons.push(`fewer than ${MIN_DISTINCT_CHARACTERS} different characters`);
  }
  const common = COMMON.filter((word) => secret.toLowerCase().includes(word));
  if (common.length > 0) {
    reasons.push(`contains a common word or sequence (${common.join(', ')})`);
  }
  return reasons;
}
