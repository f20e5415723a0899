/** Arithmetic on `#rrggbb` colours, for shading a scene's land by the light of its sky. */

function channels(hex: string): [number, number, number] {
  const value = Number.parseInt(hex.slice(1), 16);
  return [(value >> 16) & 255, (value >> 8) & 255, value & 255];
}

/** `from` moved a fraction `amount` (0–1) of the way towards `to`. */
export function mixColours(from: string, to: string, amount: number): string {
  const a = channels(from);
  const b = channels(to);
  // a and b are both three channels.
  const mixed = a.map((channel, index) => Math.round(channel + (b[index]! - channel) * amount));
  return `#${mixed.map((channel) => channel.toString(16).padStart(2, '0')).join('')}`;
}

/** Relative brightness 0–1 (Rec. 709 weights on the raw channels; enough to compare skies). */
export function brightnessOf(hex: string): number {
  const [r, g, b] = channels(hex);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}
