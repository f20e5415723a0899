/**
 * The keys the user signed in with, in the tab's sessionStorage only: gone when the tab closes, never put in a
 * URL (requests carry them in the Authorization header) and never logged.
 */
import { signal } from './signal.ts';

const API_KEY = 'omnigate.apiKey';
const ADMIN_KEY = 'omnigate.adminKey';

export const apiKey = signal<string | null>(sessionStorage.getItem(API_KEY));
export const adminKey = signal<string | null>(sessionStorage.getItem(ADMIN_KEY));

export function signIn(kind: 'api' | 'admin', key: string): void {
  sessionStorage.setItem(kind === 'api' ? API_KEY : ADMIN_KEY, key);
  (kind === 'api' ? apiKey : adminKey).set(key);
}

export function signOut(): void {
  sessionStorage.removeItem(API_KEY);
  sessionStorage.removeItem(ADMIN_KEY);
  apiKey.set(null);
  adminKey.set(null);
}
