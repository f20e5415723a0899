/**
 * Two instances on one database, each with its own data directory, given one pepper file
 * (`OMNIGATE_PEPPER_FILE`): a key created through one verifies through the other, and a media link signed
 * by one is accepted by the other. Without the shared file the second instance has a pepper of its own,
 * which the database refuses; a link signed under another pepper is refused.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkConfigCommand } from '../../server/cli/config-check.js';
import { openStores, type Stores } from '../../server/services.js';

const opened: Stores[] = [];
afterEach(async () => {
  for (const stores of opened.splice(0)) {
    await stores.close();
  }
});

async function instance(databasePath: string, pepperFile?: string): Promise<Stores> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'omnigate-instance-'));
  const stores = await openStores({ kind: 'data-dir', dataDir, databasePath, pepperFile });
  opened.push(stores);
  return stores;
}

describe('a pepper file shared by two instances', () => {
  it('verifies keys made by either on both, and each accepts the media links the other signs', async () => {
    const shared = mkdtempSync(path.join(tmpdir(), 'omnigate-shared-'));
    const pepperFile = path.join(shared, 'pepper');
    writeFileSync(pepperFile, `${'5f'.repeat(32)}\n`);
    chmodSync(pepperFile, 0o400);
    const databasePath = path.join(shared, 'omnigate.sqlite');
    const a = await instance(databasePath, pepperFile);
    const b = await instance(databasePath, pepperFile);
    const made = await a.keys.create({ name: 'made on a' });
    expect((await b.keys.verify(made.key))?.id).toBe(made.record.id);
    const other = await b.keys.create({ name: 'made on b' });
    expect((await a.keys.verify(other.key))?.id).toBe(other.record.id);
    expect(await b.keys.verify(`${made.key}x`)).toBeUndefined();

    const expiresAt = 2_000_000_000;
    const link = new URL(a.links.pathFor('media_AAAAAAAAAAAAAAAAAAAAAAAAAA', expiresAt), 'http://a.example');
    const signature = link.searchParams.get('signature')!;
    expect(b.links.check('media_AAAAAAAAAAAAAAAAAAAAAAAAAA', expiresAt, signature, 1_900_000_000)).toBe('ok');
    const back = new URL(b.links.pathFor('media_BBBBBBBBBBBBBBBBBBBBBBBBBB', expiresAt), 'http://b.example');
    expect(
      a.links.check('media_BBBBBBBBBBBBBBBBBBBBBBBBBB', expiresAt, back.searchParams.get('signature')!, 1_900_000_000),
    ).toBe('ok');
  });

  it('is what makes it work: without it the second instance is refused, and links of another pepper are refused', async () => {
    const shared = mkdtempSync(path.join(tmpdir(), 'omnigate-shared-'));
    const pepperFile = path.join(shared, 'pepper');
    writeFileSync(pepperFile, 'c0'.repeat(32));
    chmodSync(pepperFile, 0o600);
    const databasePath = path.join(shared, 'omnigate.sqlite');
    const a = await instance(databasePath, pepperFile);
    await a.keys.create({ name: 'made on a' });
    await expect(instance(databasePath)).rejects.toThrow(/pepper .* does not match this database/);
    const stranger = await instance(path.join(shared, 'other.sqlite'));
    const expiresAt = 2_000_000_000;
    const link = new URL(stranger.links.pathFor('media_CCCCCCCCCCCCCCCCCCCCCCCCCC', expiresAt), 'http://x.example');
    expect(
      a.links.check('media_CCCCCCCCCCCCCCCCCCCCCCCCCC', expiresAt, link.searchParams.get('signature')!, 1_900_000_000),
    ).toBe('invalid_signature');
  });

  it('is read by config check: a missing one is a configuration error (exit 78), a good one passes', async () => {
    const shared = mkdtempSync(path.join(tmpdir(), 'omnigate-shared-'));
    const configFile = path.join(shared, 'omnigate.yaml');
    writeFileSync(configFile, 'aliases: {}\n');
    const missing = path.join(shared, 'no-such-pepper');
    const errors: string[] = [];
    expect(
      await checkConfigCommand(
        configFile,
        { OMNIGATE_PEPPER_FILE: missing },
        () => {},
        (line) => errors.push(line),
      ),
    ).toBe(78);
    expect(errors.join('\n')).toContain(
      `configuration error: ${configFile}: OMNIGATE_PEPPER_FILE: cannot read ${missing}`,
    );
    const pepperFile = path.join(shared, 'pepper');
    writeFileSync(pepperFile, 'e1'.repeat(32));
    chmodSync(pepperFile, 0o600);
    expect(
      await checkConfigCommand(
        configFile,
        { OMNIGATE_PEPPER_FILE: pepperFile },
        () => {},
        () => {},
      ),
    ).toBe(0);
  });
});
