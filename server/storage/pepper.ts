/**
 * The pepper: 32 random bytes kept in a file next to the database, the key of the HMAC under which API keys are
 * stored. It lives outside the database so that a copied database (a backup, a leaked file) is useless for
 * guessing keys, even weak operator-chosen ones, without the file.
 *
 * Instances that share a database must share the pepper too (keys verify, and a media link signed by one
 * instance is accepted by every other): `OMNIGATE_PEPPER_FILE` names a file given to all of them (a mounted
 * secret), read by `readPepperFile`. That file is the operator's: it must exist (it is never created, so a
 * missing mount fails the start instead of giving one instance a pepper of its own), hold at least 32 bytes,
 * and not be writable by group or others (whoever can replace it can invalidate every key). A file readable by
 * group or others is accepted with a warning, because mounted secrets often are (Kubernetes' default 0644,
 * Docker's 0444) and refusing them would make the safe setting harder to reach than the unsafe one.
 */
import { chmodSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ConfigError } from '../config.js';

export const PEPPER_FILE = 'omnigate.pepper';
const PEPPER_BYTES = 32;

/**
 * The pepper in an operator's file: its bytes as they are, less one final line ending, so that a value written
 * by `openssl rand -hex 32 > file` and the same value stored without the newline (a secret made from a literal)
 * are one pepper. `warn` hears that the file is readable by group or others.
 */
export function readPepperFile(file: string, warn: (message: string) => void = () => {}): Buffer {
  let mode: number;
  let content: Buffer;
  try {
    mode = statSync(file).mode;
    content = readFileSync(file);
  } catch (error) {
    throw new ConfigError(`OMNIGATE_PEPPER_FILE: cannot read ${file}: ${(error as Error).message}`);
  }
  if (mode & 0o022) {
    throw new ConfigError(
      `OMNIGATE_PEPPER_FILE: ${file} is writable by group or others (mode ${(mode & 0o777).toString(8)}); make it 0400 or 0600`,
    );
  }
  let end = content.length;
  if (content[end - 1] === 0x0a) {
    end -= content[end - 2] === 0x0d ? 2 : 1;
  }
  const pepper = content.subarray(0, end);
  if (pepper.length < PEPPER_BYTES) {
    throw new ConfigError(
      `OMNIGATE_PEPPER_FILE: ${file} holds ${pepper.length} bytes, needs at least ${PEPPER_BYTES} (make one with: openssl rand -hex 32 > ${file})`,
    );
  }
  if (mode & 0o044) {
    warn(
      `OMNIGATE_PEPPER_FILE: ${file} is readable by group or others (mode ${(mode & 0o777).toString(8)}); 0400 keeps it to this user`,
    );
  }
  return Buffer.from(pepper);
}

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

/**
 * The operator's pepper file when one is given (`OMNIGATE_PEPPER_FILE`); otherwise the data directory's,
 * created (mode 0600) at first start.
 */
export function loadPepper(dataDir: string, given?: { file?: string; warn?: (message: string) => void }): Buffer {
  if (given?.file) {
    return readPepperFile(given.file, given.warn);
  }
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
  // The data directory may not exist yet: on SQLite the database creates it first, but on PostgreSQL
  // (`OMNIGATE_DATABASE_URL`) the pepper is the first thing written there. Private, as database.ts makes it.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
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
