/**
 * The encoder built from the ranks the build saves as JSON (scripts/token-ranks.mjs) is the package's own
 * o200k_base: same tokens for every script, including the ranks that are byte arrays rather than strings (bytes
 * that are not UTF-8 on their own). A file saved from another package version is not used.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { encode as packageEncode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM build script without type declarations
import { tokenizerPackage, tokenRanksCurrent, writeTokenRanks } from '../../scripts/token-ranks.mjs';
import { loadO200kEncoder } from './o200k-encoder.js';

const dir = mkdtempSync(path.join(tmpdir(), 'omnigate-ranks-'));
const file = path.join(dir, 'ranks.json');
beforeAll(() => writeTokenRanks(file));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const plain = { disallowedSpecial: new Set<string>() };
const samples = [
  'The gateway counts tokens for every call, in English.\n\tcode: const xs = [1, 2, 3].map((x) => x * 2);',
  '你好，世界！今天的天气很好。日本語のテキスト。한국어 문장도 있습니다.',
  'Ελληνικά, русский текст, עברית, العربية, हिन्दी, ไทย, emoji 🧪🚀👩🏽‍💻 and <|endoftext|> as text',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
];

describe('the o200k encoder from saved ranks', () => {
  it('encodes every sample exactly as the package module does', async () => {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { package: string; ranks: unknown[] };
    expect(saved.package).toBe(tokenizerPackage());
    expect(tokenRanksCurrent(file)).toBe(true);
    // Some ranks are byte arrays: the JSON keeps them as arrays, and the samples below use such tokens.
    expect(saved.ranks.some((rank) => Array.isArray(rank))).toBe(true);

    const encoder = await loadO200kEncoder(pathToFileURL(file));
    for (const text of samples) {
      expect(encoder.encode(text, plain)).toEqual(packageEncode(text, plain));
      expect(encoder.decode(encoder.encode(text, plain))).toBe(text);
    }
  });

  it('reads the file of the installed version, and ignores one from another version or a missing one', async () => {
    // The saved ranks with two tokens' ids swapped: the encoder must give the swapped ids when it reads the file.
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { package: string; ranks: unknown[] };
    const [first, second] = packageEncode(' gateway counts', plain);
    [saved.ranks[first], saved.ranks[second]] = [saved.ranks[second], saved.ranks[first]];
    const swapped = path.join(dir, 'swapped.json');
    writeFileSync(swapped, JSON.stringify(saved));
    expect((await loadO200kEncoder(pathToFileURL(swapped))).encode(' gateway counts', plain)).toEqual([second, first]);

    const stale = path.join(dir, 'stale.json');
    writeFileSync(stale, JSON.stringify({ ...saved, package: 'gpt-tokenizer@0.0.1' }));
    // The build rewrites such a file, and a missing one.
    expect(tokenRanksCurrent(stale)).toBe(false);
    expect(tokenRanksCurrent(path.join(dir, 'missing.json'))).toBe(false);
    for (const ignored of [stale, path.join(dir, 'missing.json')]) {
      const encoder = await loadO200kEncoder(pathToFileURL(ignored));
      expect(encoder.encode(samples[0], plain)).toEqual(packageEncode(samples[0], plain));
    }
  });
});
