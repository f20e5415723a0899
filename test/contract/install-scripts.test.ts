/**
 * npm 12 skips the install scripts of dependencies that `allowScripts` does not approve, and better-sqlite3 has no
 * module without its own. Every package of a lockfile that has an install script must be approved (or denied on
 * purpose), so `npm install` builds the gateway and the client tests under npm 12 as under npm 10 and 11.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface Lockfile {
  packages: Record<string, { hasInstallScript?: boolean }>;
}

function packagesWithInstallScripts(lockfile: string): string[] {
  const { packages } = JSON.parse(readFileSync(new URL(lockfile, import.meta.url), 'utf8')) as Lockfile;
  return Object.entries(packages)
    .filter(([path, entry]) => path !== '' && entry.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
}

function decided(manifest: string): string[] {
  const { allowScripts } = JSON.parse(readFileSync(new URL(manifest, import.meta.url), 'utf8')) as {
    allowScripts?: Record<string, boolean>;
  };
  return Object.keys(allowScripts ?? {}).map((key) => key.replace(/(?<=.)@[^@/]+$/, ''));
}

describe('install scripts', () => {
  it.each([
    ['the gateway', '../../package-lock.json', '../../package.json'],
    ['the client tests', '../clients/package-lock.json', '../clients/package.json'],
  ])('of %s are each approved or denied in package.json', (_what, lockfile, manifest) => {
    const needed = packagesWithInstallScripts(lockfile);
    expect(needed.length).toBeGreaterThan(0);
    expect(needed.filter((name) => !decided(manifest).includes(name))).toEqual([]);
  });
});
