/**
 * Token counts over HTTP checked against counts known without the gateway: OpenAI's published o200k_base
 * encodings of two strings (the cookbook "How to count tokens with tiktoken"), and the raw `gpt-tokenizer`
 * encoder called here, never the server's own counting function. A call's count follows OpenAI's recipe for chat
 * models: 3 tokens per message, its role and content, and 3 to prime the reply.
 */
import { countTokens as rawCount } from 'gpt-tokenizer/encoding/o200k_base';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-test-app.js';

/** o200k_base token ids as OpenAI's cookbook prints them: [83, 8251, 2488, 382, 2212, 0] and six ids. */
const PUBLISHED = { 'tiktoken is great!': 6, antidisestablishmentarianism: 6 };
const MIXED = 'Die Straße ist 3.5 km lang — 你好，世界！ `const x = [1, 2];` 👍🏽\n\nDon’t stop.';

const PER_MESSAGE = 3;
const REPLY_PRIMER = 3;
const ROLE_TOKENS = { user: 1, system: 1 }; // "user" is [1428], "system" is [17360]

describe('count_tokens and prompt_tokens against independently known counts', async () => {
  const { app, key } = await createTestApp();
  const countOf = async (messages: Array<{ role: 'user'; content: string }>, system?: string) => {
    const res = await request(app)
      .post('/anthropic/v1/messages/count_tokens')
      .set('x-api-key', key)
      .send({ model: 'local:chat', messages, ...(system === undefined ? {} : { system }) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body as { input_tokens: number }).input_tokens;
  };

  it.each(Object.entries(PUBLISHED))('counts %j as OpenAI publishes it (%i tokens)', async (text, tokens) => {
    expect(rawCount(text)).toBe(tokens); // the raw encoder agrees with the published ids
    expect(await countOf([{ role: 'user', content: text }])).toBe(
      PER_MESSAGE + ROLE_TOKENS.user + tokens + REPLY_PRIMER,
    );
  });

  it('counts mixed text, several messages and a system prompt as the raw encoder does', async () => {
    const messages = [
      { role: 'user' as const, content: MIXED },
      { role: 'user' as const, content: MIXED.repeat(50) },
    ];
    const system = 'You are terse.';
    const expected =
      messages.reduce((sum, message) => sum + PER_MESSAGE + ROLE_TOKENS.user + rawCount(message.content), 0) +
      PER_MESSAGE +
      ROLE_TOKENS.system +
      rawCount(system) +
      REPLY_PRIMER;
    expect(await countOf(messages, system)).toBe(expected);
  });

  it('reports the same count as prompt_tokens of a chat completion', async () => {
    const text = Object.keys(PUBLISHED)[0];
    const res = await request(app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key}`)
      .send({ model: 'local:chat', messages: [{ role: 'user', content: text }] });
    expect(res.status).toBe(200);
    expect((res.body as { usage: { prompt_tokens: number } }).usage.prompt_tokens).toBe(
      PER_MESSAGE + ROLE_TOKENS.user + 6 + REPLY_PRIMER,
    );
  });
});
