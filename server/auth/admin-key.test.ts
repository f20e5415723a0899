import { describe, expect, it } from 'vitest';
import { adminKeyCheck, adminPaths, bearerToken } from './admin-key.js';
import { loadSpec } from '../spec/load-spec.js';

describe('the admin key', () => {
  it('accepts exactly the configured key, and nothing when none is configured', () => {
    const check = adminKeyCheck('og-admin-0123456789abcdef');
    expect(check('og-admin-0123456789abcdef')).toBe(true);
    expect(check('og-admin-0123456789abcdeF')).toBe(false);
    expect(check('og-admin')).toBe(false);
    expect(check(undefined)).toBe(false);
    expect(adminKeyCheck(undefined)('')).toBe(false);
    expect(adminKeyCheck('')('')).toBe(false);
  });

  it('reads the bearer token and finds the operations the contract secures with adminKey alone', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect([...adminPaths(loadSpec().document)]).toEqual(['/metrics']);
  });
});
