/**
 * Recorded upstream answers, kept beside the provider unit tests that replay them
 * (`server/providers/<provider>/__fixtures__/`); the contract tests and the matrix read the same files.
 */
import { readFileSync } from 'node:fs';

const providers = new URL('../../server/providers/', import.meta.url);

export function openAIFixture(name: string): string {
  return readFileSync(new URL(`openai-compatible/__fixtures__/${name}`, providers), 'utf8');
}

export function anthropicFixture(name: string): string {
  return readFileSync(new URL(`anthropic/__fixtures__/${name}`, providers), 'utf8');
}
