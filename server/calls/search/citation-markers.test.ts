import { describe, expect, it } from 'vitest';
import { createMarkerFilter, renumberCitations } from './citation-markers.js';

describe('renumberCitations', () => {
  it.each([
    ['renumbers by first use', 'A [3]. B [1]. C [3].', 3, 'A [1]. B [2]. C [1].', [3, 1]],
    ['drops markers past the sources', 'A [1]. B [7]. C [0].', 2, 'A [1]. B. C.', [1]],
    ['splits groups and drops their bad members', 'A [2, 9, 1].', 2, 'A [1][2].', [2, 1]],
    ['keeps a text without markers', 'Nothing cited.', 2, 'Nothing cited.', []],
  ])('%s', (_name, text, count, answer, order) => {
    expect(renumberCitations(text, count)).toEqual({ answer, order });
  });
});

describe('createMarkerFilter', () => {
  it('drops bad markers even when split across deltas, keeps good ones and plain brackets', () => {
    const filter = createMarkerFilter(2);
    const deltas = ['Fact one [', '1]. Fact two [', '5', ']. A list [x] and [2', ', 8].'];
    const out = deltas.map((delta) => filter.push(delta)).join('') + filter.flush();
    expect(out).toBe('Fact one [1]. Fact two. A list [x] and [2].');
  });
});
