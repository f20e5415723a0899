/**
 * The operator's pepper file (`OMNIGATE_PEPPER_FILE`): never created, at least 32 bytes, not writable by group
 * or others (refused), readable by them only with a warning; one final line ending is not part of it.
 */
import { chmodSync, existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config.js';
import { loadPepper, PEPPER_FILE, readPepperFile } from './pepper.js';

const HEX = 'a3'.repeat(32);

function pepperFile(content: string | Buffer, mode = 0o600): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-pepper-')), 'pepper');
  writeFileSync(file, content);
  chmodSync(file, mode);
  return file;
}

function refusal(file: string): string {
  try {
    readPepperFile(file);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('readPepperFile', () => {
  it('reads the bytes as they are, less one final line ending', () => {
    const plain = readPepperFile(pepperFile(HEX));
    expect(plain).toEqual(Buffer.from(HEX));
    expect(readPepperFile(pepperFile(`${HEX}\n`))).toEqual(plain);
    expect(readPepperFile(pepperFile(`${HEX}\r\n`))).toEqual(plain);
    expect(readPepperFile(pepperFile(`${HEX}\n\n`))).toEqual(Buffer.from(`${HEX}\n`));
    const binary = Buffer.alloc(32, 7);
    expect(readPepperFile(pepperFile(binary, 0o400))).toEqual(binary);
  });

  it('refuses a missing file without creating it, and one shorter than 32 bytes', () => {
    const missing = path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-pepper-')), 'absent');
    expect(refusal(missing)).toContain(`OMNIGATE_PEPPER_FILE: cannot read ${missing}`);
    expect(existsSync(missing)).toBe(false);
    expect(refusal(pepperFile(`${'x'.repeat(31)}\n`))).toContain('holds 31 bytes, needs at least 32');
  });

  it.each([0o620, 0o602, 0o666])('refuses a file writable by group or others (mode %o)', (mode) => {
    expect(refusal(pepperFile(HEX, mode))).toContain('is writable by group or others');
  });

  it('accepts a file readable by group or others with a warning, and warns of nothing for 0600 or 0400', () => {
    for (const [mode, warned] of [
      [0o644, 1],
      [0o440, 1],
      [0o600, 0],
      [0o400, 0],
    ]) {
      const warnings: string[] = [];
      expect(readPepperFile(pepperFile(HEX, mode), (message) => warnings.push(message))).toEqual(Buffer.from(HEX));
      expect(warnings, mode.toString(8)).toHaveLength(warned);
    }
  });

  it('is what loadPepper reads when given, leaving the data directory without a pepper of its own', () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'omnigate-data-'));
    expect(loadPepper(dataDir, { file: pepperFile(HEX) })).toEqual(Buffer.from(HEX));
    expect(existsSync(path.join(dataDir, PEPPER_FILE))).toBe(false);
  });
});

describe('loadPepper without a pepper file', () => {
  // On PostgreSQL no SQLite file creates the data directory first: the pepper is the first thing written there.
  it('creates a data directory that does not exist yet (0700), then the pepper (0600), read back alike', () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-data-')), 'fresh', 'data');
    const pepper = loadPepper(dataDir);
    expect(pepper).toHaveLength(32);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dataDir, PEPPER_FILE)).mode & 0o777).toBe(0o600);
    expect(loadPepper(dataDir)).toEqual(pepper);
  });
});
