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

/** A limit as the config, the CLI and the admin API spell it (snake_case), with its bounds. */
export const LIMIT_FIELDS = {
  rpm: { key: 'rpm', max: 100_000_000, integer: true },
  tpm: { key: 'tpm', max: 1_000_000_000_000, integer: true },
  max_parallel: { key: 'maxParallel', max: 1_000_000, integer: true },
  media_units_per_day: { key: 'mediaUnitsPerDay', max: 1_000_000_000_000, integer: true },
  budget_usd: { key: 'budgetUsd', max: 1_000_000_000, integer: false },
} as const satisfies Record<string, { key: keyof Limits; max: number; integer: boolean }>;

export type WireLimitField = keyof typeof LIMIT_FIELDS | 'budget_period';

/** A limit value refused, naming its field as the caller spelt it. */
export class LimitValueError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'LimitValueError';
  }
}

/** Checks one numeric limit: a finite number, not negative, an integer where counted, within its bound. */
export function checkLimitValue(field: keyof typeof LIMIT_FIELDS, value: unknown, named: string = field): number {
  const spec = LIMIT_FIELDS[field];
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new LimitValueError(named, `${named} must be a number`);
  }
  if (value < 0) {
    throw new LimitValueError(named, `${named} must not be negative`);
  }
  if (spec.integer && !Number.isInteger(value)) {
    throw new LimitValueError(named, `${named} must be a whole number`);
  }
  if (value > spec.max) {
    throw new LimitValueError(named, `${named} must be at most ${spec.max}`);
  }
  return value;
}

/**
 * Limits in their wire spelling → `Limits`. A field given as null is cleared: it comes back in `cleared`, so
 * an update can drop it from what was stored.
 */
export function limitsFromWire(input: Partial<Record<WireLimitField, unknown>>): {
  limits: Limits;
  cleared: Array<keyof Limits>;
} {
  const limits: Limits = {};
  const cleared: Array<keyof Limits> = [];
  for (const [field, spec] of Object.entries(LIMIT_FIELDS) as Array<
    [keyof typeof LIMIT_FIELDS, (typeof LIMIT_FIELDS)[keyof typeof LIMIT_FIELDS]]
  >) {
    const value = input[field];
    if (value === null) {
      cleared.push(spec.key);
    } else if (value !== undefined) {
      (limits as Record<string, number>)[spec.key] = checkLimitValue(field, value);
    }
  }
  const period = input.budget_period;
  if (period === null) {
    cleared.push('budgetPeriod');
  } else if (period !== undefined) {
    if (period !== 'day' && period !== 'month' && period !== 'total') {
      throw new LimitValueError('budget_period', 'budget_period must be one of day, month, total');
    }
    limits.budgetPeriod = period;
  }
  return { limits, cleared };
}

/** `Limits` in their wire spelling. */
export type WireLimits = Partial<Record<keyof typeof LIMIT_FIELDS, number>> & { budget_period?: BudgetPeriod };

/** `Limits` in their wire spelling; unset fields are left out. */
export function limitsToWire(limits: Limits): WireLimits {
  const wire: WireLimits = {};
  for (const [field, spec] of Object.entries(LIMIT_FIELDS) as Array<
    [keyof typeof LIMIT_FIELDS, (typeof LIMIT_FIELDS)[keyof typeof LIMIT_FIELDS]]
  >) {
    const value = limits[spec.key];
    if (typeof value === 'number') {
      wire[field] = value;
    }
  }
  if (limits.budgetPeriod) {
    wire.budget_period = limits.budgetPeriod;
  }
  return wire;
}

/** `base` with `change`'s fields set and `cleared`'s removed. */
export function mergeLimits(base: Limits, change: Limits, cleared: Array<keyof Limits> = []): Limits {
  const merged: Limits = { ...base, ...change };
  for (const field of cleared) {
    delete merged[field];
  }
  return Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined)) as Limits;
}
