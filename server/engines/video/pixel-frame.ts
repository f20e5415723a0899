/**
 * One RGBA frame as a `Uint32Array` (one element per pixel) over the bytes ffmpeg reads, with the few drawing
 * operations the scenes need: row fills, rectangles, discs and ellipses as row spans (one square root per row,
 * no per-pixel trigonometry), and alpha blending. Colours are packed as the platform's little-endian view of
 * RGBA bytes (`0xAABBGGRR`), which is every platform Node's prebuilt binaries exist for.
 */

export interface PixelFrame {
  width: number;
  height: number;
  /** The bytes, RGBA, row by row: what the encoders take. */
  bytes: Uint8Array;
  pixels: Uint32Array;
}

export function createFrame(width: number, height: number): PixelFrame {
  const bytes = new Uint8Array(width * height * 4);
  return { width, height, bytes, pixels: new Uint32Array(bytes.buffer) };
}

/** `#rrggbb` → packed opaque pixel. */
export function packHex(hex: string): number {
  const value = Number.parseInt(hex.slice(1), 16);
  return packRgb((value >> 16) & 255, (value >> 8) & 255, value & 255);
}

export function packRgb(r: number, g: number, b: number): number {
  return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

/** `from` moved `amount` (0–1) of the way to `to`, both packed. */
export function mixPacked(from: number, to: number, amount: number): number {
  const keep = 1 - amount;
  return packRgb(
    Math.round((from & 255) * keep + (to & 255) * amount),
    Math.round(((from >>> 8) & 255) * keep + ((to >>> 8) & 255) * amount),
    Math.round(((from >>> 16) & 255) * keep + ((to >>> 16) & 255) * amount),
  );
}

/** Fills `[x0, x1)` of row `y`, clipped to the frame; `alpha` below 1 blends over what is there. */
export function fillSpan(frame: PixelFrame, y: number, x0: number, x1: number, colour: number, alpha = 1): void {
  if (y < 0 || y >= frame.height) {
    return;
  }
  const from = Math.max(0, Math.round(x0));
  const to = Math.min(frame.width, Math.round(x1));
  if (to <= from) {
    return;
  }
  const row = y * frame.width;
  if (alpha >= 1) {
    frame.pixels.fill(colour, row + from, row + to);
    return;
  }
  blendRun(frame.pixels, row + from, row + to, colour, alpha);
}

/** Blends `colour` at `alpha` over pixels `[start, end)`, in fixed point (0–256) to keep the loop integer-only. */
function blendRun(pixels: Uint32Array, start: number, end: number, colour: number, alpha: number): void {
  const a = Math.round(Math.max(0, alpha) * 256);
  const keep = 256 - a;
  const r = (colour & 255) * a;
  const g = ((colour >>> 8) & 255) * a;
  const b = ((colour >>> 16) & 255) * a;
  for (let index = start; index < end; index++) {
    const under = pixels[index]!; // fillSpan clips the span to the frame
    pixels[index] =
      ((255 << 24) |
        (((((under >>> 16) & 255) * keep + b) >> 8) << 16) |
        (((((under >>> 8) & 255) * keep + g) >> 8) << 8) |
        (((under & 255) * keep + r) >> 8)) >>>
      0;
  }
}

export function fillRect(
  frame: PixelFrame,
  x: number,
  y: number,
  width: number,
  height: number,
  colour: number,
  alpha = 1,
): void {
  const top = Math.max(0, Math.round(y));
  const bottom = Math.min(frame.height, Math.round(y + height));
  for (let row = top; row < bottom; row++) {
    fillSpan(frame, row, x, x + width, colour, alpha);
  }
}

/** An axis-aligned ellipse centred on (cx, cy); a disc when the radii are equal. */
export function fillEllipse(
  frame: PixelFrame,
  cx: number,
  cy: number,
  rx: number,
  ry: number,
  colour: number,
  alpha = 1,
): void {
  if (rx <= 0 || ry <= 0) {
    return;
  }
  const top = Math.max(0, Math.ceil(cy - ry));
  const bottom = Math.min(frame.height - 1, Math.floor(cy + ry));
  for (let y = top; y <= bottom; y++) {
    const dy = (y - cy) / ry;
    const half = rx * Math.sqrt(Math.max(0, 1 - dy * dy));
    fillSpan(frame, y, cx - half, cx + half, colour, alpha);
  }
}

/** A soft glow: concentric discs of falling alpha, so no per-pixel distance is computed. */
export function fillGlow(
  frame: PixelFrame,
  cx: number,
  cy: number,
  radius: number,
  colour: number,
  alpha: number,
  rings = 5,
): void {
  for (let ring = rings; ring >= 1; ring--) {
    const r = (radius * ring) / rings;
    fillEllipse(frame, cx, cy, r, r, colour, alpha / rings);
  }
}

/** A straight stroke one pixel wide per step (rain, lightning, bird wings), blended. */
export function strokeLine(
  frame: PixelFrame,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  thickness: number,
  colour: number,
  alpha = 1,
): void {
  const steps = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
  const half = thickness / 2;
  for (let step = 0; step <= steps; step++) {
    const x = x0 + ((x1 - x0) * step) / steps;
    const y = Math.round(y0 + ((y1 - y0) * step) / steps);
    fillSpan(frame, y, x - half, x + half, colour, alpha);
  }
}
