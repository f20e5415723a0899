/**
 * Streams into a file that must not exist yet (mode 0600). The file is opened before the first byte flows, so
 * that when the source fails (an upload over its size limit, a client gone) the file a caller removes is already
 * there: a stream opened lazily can create it after that removal, leaving a stray file behind.
 */
import { open } from 'node:fs/promises';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export async function writeNewFile(file: string, source: Readable, through?: Transform): Promise<void> {
  const handle = await open(file, 'wx', 0o600);
  // The write stream owns the handle: it closes it at its end, on error and when destroyed.
  const sink = handle.createWriteStream();
  await (through ? pipeline(source, through, sink) : pipeline(source, sink));
}
