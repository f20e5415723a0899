// Saves gpt-tokenizer's o200k_base ranks as JSON beside the compiled encoder (dist/tokens/), for the tokenizer
// thread to read (server/tokens/o200k-encoder.ts). The package ships its ranks as a 2.4 MB JavaScript module of
// array literals; compiling that costs the thread about 30 MiB more than parsing the same ranks as JSON
// (bench/README.md), and glibc keeps much of it after the thread exits. The file names the package version it
// came from first, so ranks from another version are never used, and the build rewrites them only when they are
// missing or from another version. Run by `npm run build` and scripts/ensure-build.mjs.
import { closeSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const TOKEN_RANKS_FILE = fileURLToPath(new URL('../dist/tokens/o200k_base.ranks.json', import.meta.url));

/** The installed gpt-tokenizer, as the saved file names it. */
export function tokenizerPackage() {
  return `gpt-tokenizer@${createRequire(import.meta.url)('gpt-tokenizer/package.json').version}`;
}

/** Whether `file` holds the ranks of the installed package: its first bytes name the version (see below). */
export function tokenRanksCurrent(file = TOKEN_RANKS_FILE) {
  const expected = `{"package":${JSON.stringify(tokenizerPackage())},`;
  const head = Buffer.alloc(expected.length);
  let fd;
  try {
    fd = openSync(file, 'r');
    readSync(fd, head, 0, head.length, 0);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) {
      closeSync(fd);
    }
  }
  return head.toString('utf8') === expected;
}

/** Writes the ranks to `file` (a whole file or none: written aside, then renamed). */
export async function writeTokenRanks(file = TOKEN_RANKS_FILE) {
  const { default: ranks } = await import('gpt-tokenizer/bpeRanks/o200k_base');
  mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, JSON.stringify({ package: tokenizerPackage(), ranks }));
  renameSync(partial, file);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url) && !tokenRanksCurrent()) {
  await writeTokenRanks();
}
