/**
 * The limits an operator sets on an API key or on a project (a named group of keys). Every field is optional:
 * absent means "no limit at this level". Where a key and its project both set a field, the stricter applies;
 * the YAML config's `limits:` gives the defaults for keys that set nothing. Counting and enforcing them lives
 * in the limits layer; storing them is the key store's (per key) and the project store's (per project).
 */
export type BudgetPeriod = 'day' | 'month' | 'total';

export interface Limits {
  /** Requests per minute. */
  rpm?: number;
  /** Tokens per minute: input + output, counted as usage is counted. */
  tpm?: number;
  /** Requests in flight at once; a stream counts until it ends. */
  maxParallel?: number;
  /** Media units per day: images, speech characters, music and video seconds. */
  mediaUnitsPerDay?: number;
  /** Spend budget in USD over `budgetPeriod` (default 'month'). */
  budgetUsd?: number;
  budgetPeriod?: BudgetPeriod;
}
