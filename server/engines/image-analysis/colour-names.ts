/**
 * Names an RGB colour by the nearest of a short list of plain colour words. The list is deliberately small
 * (a description reads "mostly navy with white tones", not "#1b2a4e"); nearness is measured in a weighted
 * RGB space ("redmean"), which tracks perceived difference far better than plain Euclidean RGB at no cost.
 */

const NAMED: ReadonlyArray<readonly [string, number, number, number]> = [
  ['black', 0, 0, 0],
  ['charcoal', 54, 69, 79],
  ['grey', 128, 128, 128],
  ['silver', 192, 192, 192],
  ['white', 255, 255, 255],
  ['maroon', 128, 0, 0],
  ['red', 220, 30, 30],
  ['crimson', 220, 20, 60],
  ['pink', 255, 170, 190],
  ['brown', 139, 69, 19],
  ['tan', 210, 180, 140],
  ['orange', 255, 140, 0],
  ['gold', 255, 205, 0],
  ['yellow', 255, 255, 60],
  ['beige', 240, 230, 200],
  ['olive', 128, 128, 0],
  ['lime', 150, 230, 40],
  ['green', 30, 140, 40],
  ['dark green', 0, 80, 30],
  ['teal', 0, 128, 128],
  ['cyan', 0, 220, 230],
  ['sky blue', 135, 206, 235],
  ['blue', 30, 80, 220],
  ['navy', 0, 0, 110],
  ['purple', 128, 0, 128],
  ['violet', 170, 110, 230],
  ['magenta', 230, 0, 200],
];

export function colourName(r: number, g: number, b: number): string {
  let best = NAMED[0]![0]; // NAMED is a non-empty constant
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const [name, nr, ng, nb] of NAMED) {
    const meanRed = (r + nr) / 2;
    const dr = r - nr;
    const dg = g - ng;
    const db = b - nb;
    const distance = (2 + meanRed / 256) * dr * dr + 4 * dg * dg + (2 + (255 - meanRed) / 256) * db * db;
    if (distance < bestDistance) {
      bestDistance = distance;
      best = name;
    }
  }
  return best;
}

export function hexOf(r: number, g: number, b: number): string {
  return `#${[r, g, b].map((channel) => Math.round(channel).toString(16).padStart(2, '0')).join('')}`;
}
