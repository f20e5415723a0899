/**
 * Text is scanned this many chars at a time; a piece the encoder tokenizes is at most this long (see
 * text-pieces.ts). Its own file because the main thread needs the number too (token-counter.ts keeps one
 * window beyond its budget) and must not load text-pieces.ts, which imports gpt-tokenizer's split pattern.
 */
export const WINDOW_CHARS = 1024;
