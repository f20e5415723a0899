import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { queryTerms, safeMatchExpression } from './safe-match.js';

const db = new Database(':memory:');
db.exec("CREATE VIRTUAL TABLE docs USING fts5(title, body, tokenize='porter unicode61 remove_diacritics 2')");
db.prepare('INSERT INTO docs (title, body) VALUES (?, ?)').run(
  'notes.md',
  'Café opening hours: the NEAR store opens at nine. AND OR NOT are words too. 東京タワー',
);
const search = db.prepare('SELECT title FROM docs WHERE docs MATCH ?');

describe('safeMatchExpression', () => {
  it.each([
    ['"'],
    ['*'],
    ['NEAR('],
    ['AND OR'],
    ['-'],
    ['col:'],
    ['title:café'],
    ['a" OR "b'],
    ['(((('],
    ['^start'],
    ['NOT'],
    ['""""'],
    ['x AND'],
    ['\u0000'],
    ['🙂 emoji'],
  ])('never makes an FTS5 syntax error from %j', (query) => {
    const match = safeMatchExpression(query);
    if (match !== undefined) {
      expect(() => search.all(match)).not.toThrow();
    }
  });

  it('finds words FTS5 would read as operators, diacritics folded, stems matched, CJK runs whole', () => {
    expect(search.all(safeMatchExpression('NEAR(')!)).toHaveLength(1);
    expect(search.all(safeMatchExpression('AND OR')!)).toHaveLength(1);
    expect(search.all(safeMatchExpression('cafe')!)).toHaveLength(1);
    expect(search.all(safeMatchExpression('opened')!)).toHaveLength(1);
    expect(search.all(safeMatchExpression('東京タワー')!)).toHaveLength(1);
  });

  it('ORs terms, so one missing word does not empty the result', () => {
    expect(search.all(safeMatchExpression('store zebra')!)).toHaveLength(1);
  });

  it('gives nothing to search for punctuation alone', () => {
    expect(safeMatchExpression('*** -- ""')).toBeUndefined();
  });

  it('caps the number of terms', () => {
    expect(queryTerms(Array.from({ length: 100 }, (_, index) => `w${index}`).join(' '))).toHaveLength(32);
  });

  it('survives arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), (query) => {
        const match = safeMatchExpression(query);
        if (match !== undefined) {
          search.all(match);
        }
      }),
      { numRuns: 300 },
    );
  });
});
