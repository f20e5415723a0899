/**
 * The pepper: 32 random bytes kept in a file next to the database, the key of the HMAC under which API keys are
 * stored. It lives outside the database so that a copied database (a backup, a leaked file) is useless for
 * guessing keys, even weak operator-chosen ones, without the file.
 */
import { chmodSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

export const PEPPER_FILE = 'omnigate.pepper';
const PEPPER_BYTES = 32;

function read(file: string): Buffer {
  const pepper = readFileSync(file);
  if (pepper.length !== PEPPER_BYTES) {
    throw new Error(
      `${file} must hold ${PEPPER_BYTES} bytes, has ${pepper.length}; restore it from a backup of this data directory`,
    );
  }
  chmodSync(file, 0o600);
  return pepper;
}

/** Reads the data directory's pepper, creating it (mode 0600) at first start. */
export function loadPepper(dataDir: string): Buffer {
  const file = path.join(dataDir, PEPPER_FILE);
  try {
    return read(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw error;
    }
  }
  // Written to a private temporary name and linked into place, so that a server and the keys CLI starting at
  // the same moment never read a half-written pepper: the first link wins and both read the winner.
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writeFileSync(temporary, randomBytes(PEPPER_BYTES), { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw error;
    }
  } finally {
    unlinkSync(temporary);
  }
  return read(file);
}
