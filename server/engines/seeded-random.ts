/**
 * The engines' one deterministic random source (scenes, video weather, composed music): xorshift128 seeded from
 * SHA-256 of a key, so the same key gives the same picture or piece on every machine and Node version
 * (Math.random cannot be seeded).
 */
import { createHash } from 'node:crypto';

export interface SeededRandom {
  /** A number in [0, 1). */
  next(): number;
  between(min: number, max: number): number;
  /** An integer in [min, max], both included. */
  integer(min: number, max: number): number;
  /** An integer in [0, n). */
  below(n: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
}

export function seededRandom(key: string): SeededRandom {
  const digest = createHash('sha256').update(key).digest();
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12);
  if ((a | b | c | d) === 0) {
    a = 1; // xorshift's one fixed point: an all-zero state would only ever give zeros
  }
  const next = () => {
    let t = d;
    const s = a;
    d = c;
    c = b;
    b = s;
    t ^= t << 11;
    t ^= t >>> 8;
    a = (t ^ s ^ (s >>> 19)) >>> 0;
    return a / 4_294_967_296;
  };
  return {
    next,
    between: (min, max) => min + (max - min) * next(),
    integer: (min, max) => min + Math.floor(next() * (max - min + 1)),
    below: (n) => Math.floor(next() * n),
    // Callers pick from non-empty lists: the index is below items.length.
    pick: (items) => items[Math.floor(next() * items.length)]!,
    chance: (probability) => next() < probability,
  };
}

/** A 32-bit seed from text (the default seed of an unseeded call): the first 32 bits of its SHA-256. */
export function seedFromText(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32LE(0);
}
