/**
 * Keeps a model's `[n]` markers honest. A language model cites loosely: numbers past the sources it was given,
 * `[1, 3]` groups, sources listed but never used. `renumberCitations` (whole answers) drops markers that point
 * at no source, splits groups into `[1][3]`, and renumbers the rest 1..k in order of first use, so every marker
 * resolves and every citation listed is used. `createMarkerFilter` (streams, where the citation list went out
 * before the text) only drops the markers that point nowhere, holding back a marker cut across two deltas.
 */

/** `[3]`, `[1, 3]`, `[1,3,4]`: a group of source numbers. */
const MARKER = /\s?\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g;
/** The longest tail that may still become a marker: `[`, `[1`, `[1, 2` … */
const PARTIAL = /\s?\[[\d,\s]{0,24}$/;

function numbersOf(group: string): number[] {
  return group.split(',').map((part) => Number(part.trim()));
}

/** `order[i]` is the source number (1-based, as the model saw it) behind new citation `i + 1`. */
export function renumberCitations(text: string, sourceCount: number): { answer: string; order: number[] } {
  const order: number[] = [];
  const answer = text.replace(MARKER, (whole, group: string) => {
    const markers = numbersOf(group)
      .filter((number) => number >= 1 && number <= sourceCount)
      .map((number) => {
        let index = order.indexOf(number);
        if (index < 0) {
          order.push(number);
          index = order.length - 1;
        }
        return `[${index + 1}]`;
      });
    const unique = [...new Set(markers)];
    return unique.length === 0 ? '' : `${whole.startsWith('[') ? '' : whole[0]}${unique.join('')}`;
  });
  return { answer, order };
}

export interface MarkerFilter {
  /** The text of this delta that can be sent now. */
  push(delta: string): string;
  /** What was held back, at the end of the stream. */
  flush(): string;
}

export function createMarkerFilter(sourceCount: number): MarkerFilter {
  let pending = '';
  const clean = (text: string) =>
    text.replace(MARKER, (whole, group: string) => {
      const kept = [...new Set(numbersOf(group).filter((number) => number >= 1 && number <= sourceCount))].map(
        (number) => `[${number}]`,
      );
      return kept.length === 0 ? '' : `${whole.startsWith('[') ? '' : whole[0]}${kept.join('')}`;
    });
  return {
    push(delta) {
      const text = pending + delta;
      const partial = PARTIAL.exec(text);
      const cut = partial ? partial.index : text.length;
      pending = text.slice(cut);
      return clean(text.slice(0, cut));
    },
    flush() {
      const rest = clean(pending);
      pending = '';
      return rest;
    },
  };
}
