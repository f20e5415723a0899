import { describe, expect, it } from 'vitest';
import { adminKeyCheck, adminPaths, bearerToken, pathMatcher } from './admin-key.js';
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
    expect([...adminPaths(loadSpec().document)].sort()).toEqual([
      '/admin/v1/keys',
      '/admin/v1/keys/{key_id}',
      '/admin/v1/projects',
      '/admin/v1/projects/{project_name}',
      '/admin/v1/usage/summary',
      '/metrics',
    ]);
    const matches = pathMatcher(adminPaths(loadSpec().document));
    expect(matches('/admin/v1/keys/key_1')).toBe(true);
    expect(matches('/admin/v1/keys/key_1/more')).toBe(false);
    expect(matches('/v1/usage/summary')).toBe(false);
  });
});
