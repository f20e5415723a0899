/**
 * The built-in `local:embed` model's engine: a deterministic LEXICAL reference embedder, not a semantic one.
 * No small embedding model ships its weights inside an npm package (Transformers.js and the ONNX models download
 * them from the Hugging Face hub at run time), so this is the feature-hashing trick over what a text is made of:
 * its words (weight 1), its adjacent word pairs (0.5) and the character trigrams of each word padded with a space
 * on each side (0.5 each, so a misspelt or inflected word still shares most of its grams). Each feature is
 * hashed (FNV-1a, 32 bits) to one of `dimensions` buckets with a sign from another bit of the hash, so collisions
 * cancel out on average instead of piling up; the vector is L2-normalised. Texts that share words are close,
 * synonyms are not. Token-id inputs hash their ids and id pairs the same way.
 *
 * Pure and synchronous: it runs in a media worker (engines/media-jobs.ts `embed`), never on the event loop.
 */

export const LEXICAL_DEFAULT_DIMENSIONS = 256;
export const LEXICAL_MAX_DIMENSIONS = 1024;

const WORD = /[\p{L}\p{N}]+/gu;

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function add(vector: Float64Array, feature: string, weight: number): void {
  const hash = fnv1a(feature);
  // The low bits pick the bucket, the top bit the sign: both from one hash, and independent enough for this.
  const bucket = hash % vector.length;
  vector[bucket] = (vector[bucket] ?? 0) + (hash & 0x80000000 ? -weight : weight);
}

function textFeatures(vector: Float64Array, text: string): void {
  const words = text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
  if (words.length === 0) {
    // Only spaces and punctuation: the characters themselves, so no input is a zero vector.
    for (const char of text) {
      add(vector, `c:${char}`, 1);
    }
    return;
  }
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    add(vector, `w:${word}`, 1);
    if (index > 0) {
      add(vector, `p:${words[index - 1]} ${word}`, 0.5);
    }
    const padded = ` ${word} `;
    for (let start = 0; start + 3 <= padded.length; start++) {
      add(vector, `g:${padded.slice(start, start + 3)}`, 0.5);
    }
  }
}

function tokenFeatures(vector: Float64Array, tokens: number[]): void {
  for (let index = 0; index < tokens.length; index++) {
    add(vector, `t:${tokens[index]}`, 1);
    if (index > 0) {
      add(vector, `tp:${tokens[index - 1]} ${tokens[index]}`, 0.5);
    }
  }
}

/** One unit vector per input, of `dimensions` float32 values (as numbers). */
export function lexicalEmbed(input: { inputs: Array<string | number[]>; dimensions: number }): number[][] {
  const vectors: number[][] = [];
  for (const item of input.inputs) {
    const vector = new Float64Array(input.dimensions);
    if (typeof item === 'string') {
      textFeatures(vector, item);
    } else {
      tokenFeatures(vector, item);
    }
    let norm = 0;
    for (const value of vector) {
      norm += value * value;
    }
    norm = Math.sqrt(norm);
    if (norm === 0) {
      // Every feature cancelled out in its buckets (possible with few dimensions): a fixed unit vector.
      vector[0] = 1;
      norm = 1;
    }
    // Rounded to float32 here, so float and base64 answers carry the same numbers.
    vectors.push(Array.from(Float32Array.from(vector, (value) => value / norm)));
  }
  return vectors;
}

/** Cosine similarity of two vectors of one length (unit vectors: their dot product). */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let index = 0; index < a.length; index++) {
    const x = a[index] ?? 0;
    const y = b[index] ?? 0;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}
