/**
 * LangChain JS (`@langchain/openai` ChatOpenAI on chat completions and on the Responses API,
 * `@langchain/anthropic` ChatAnthropic) pointed at Omnigate, unmodified: invoke, stream, and `bindTools`
 * with a manual tool loop, against the reference model and each fake upstream.
 */
import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import {
  type AIMessage,
  type AIMessageChunk,
  HumanMessage,
  ToolMessage,
  type BaseMessage,
} from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BACKENDS, startBackend, type Backend } from './support/backends.js';

type ClientName = 'ChatOpenAI' | 'ChatOpenAI responses' | 'ChatAnthropic';
const CLIENTS: ClientName[] = ['ChatOpenAI', 'ChatOpenAI responses', 'ChatAnthropic'];

function chatModel(client: ClientName, origin: string, key: string): BaseChatModel {
  switch (client) {
    case 'ChatOpenAI':
      return new ChatOpenAI({
        model: 'gpt-4o-mini',
        apiKey: key,
        configuration: { baseURL: `${origin}/v1` },
        maxRetries: 0,
      });
    case 'ChatOpenAI responses':
      return new ChatOpenAI({
        model: 'gpt-4o-mini',
        apiKey: key,
        configuration: { baseURL: `${origin}/v1` },
        useResponsesApi: true,
        maxRetries: 0,
      });
    case 'ChatAnthropic':
      return new ChatAnthropic({
        model: 'claude-sonnet-4-5',
        apiKey: key,
        anthropicApiUrl: `${origin}/anthropic`,
        maxRetries: 0,
      });
  }
}

/** The text of a LangChain message, whether its content is a string or content blocks. */
function textOf(message: BaseMessage): string {
  if (typeof message.content === 'string') {
    return message.content;
  }
  return message.content.map((block) => (block.type === 'text' && 'text' in block ? String(block.text) : '')).join('');
}

const lookup = tool(async ({ city }: { city: string }) => `It is 21 degrees in ${city}`, {
  name: 'get_weather',
  description: 'The weather in a city.',
  schema: z.object({ city: z.string() }),
});

describe.each(BACKENDS)('LangChain via %s', (backendName) => {
  let backend: Backend;

  beforeAll(async () => {
    backend = await startBackend(backendName);
  });

  afterAll(async () => {
    await backend?.close();
  });

  describe.each(CLIENTS)('%s', (client) => {
    const model = () => chatModel(client, backend.gateway.origin, backend.gateway.key);

    it('invoke answers a plain prompt with usage', async () => {
      const reply = (await model().invoke([new HumanMessage('Hello from LangChain')])) as AIMessage;
      expect(textOf(reply)).toContain(backend.echo);
      expect(textOf(reply)).toContain('Hello from LangChain');
      expect(reply.usage_metadata?.input_tokens).toBeGreaterThan(0);
      expect(reply.usage_metadata?.output_tokens).toBeGreaterThan(0);
    });

    it('stream yields the reply in chunks', async () => {
      const chunks: AIMessageChunk[] = [];
      for await (const chunk of await model().stream([new HumanMessage('Stream a LangChain reply please')])) {
        chunks.push(chunk as AIMessageChunk);
      }
      const text = chunks.map((chunk) => textOf(chunk)).join('');
      expect(text).toContain('Stream a LangChain reply please');
      expect(chunks.filter((chunk) => textOf(chunk).length > 0).length).toBeGreaterThan(1);
      const merged = chunks.reduce((all, chunk) => all.concat(chunk));
      expect(merged.usage_metadata?.output_tokens).toBeGreaterThan(0);
    });

    it('bindTools: a manual tool loop ends in an answer carrying the tool result', async () => {
      const withTools = model().bindTools!([lookup]);
      const history: BaseMessage[] = [new HumanMessage('call get_weather {"city":"Lisbon"}')];
      const first = (await withTools.invoke(history)) as AIMessage;
      expect(first.tool_calls).toHaveLength(1);
      const call = first.tool_calls![0];
      expect(call.name).toBe('get_weather');
      expect(call.args).toEqual({ city: 'Lisbon' });
      history.push(first);
      const output = await lookup.invoke(call.args as { city: string });
      history.push(new ToolMessage({ tool_call_id: call.id!, content: String(output) }));
      const second = (await withTools.invoke(history)) as AIMessage;
      expect(second.tool_calls ?? []).toHaveLength(0);
      expect(textOf(second)).toContain(backend.toolReport('get_weather'));
      expect(textOf(second)).toContain('It is 21 degrees in Lisbon');
    });

    it('bindTools: a streamed tool call arrives whole', async () => {
      const withTools = model().bindTools!([lookup]);
      let merged: AIMessageChunk | undefined;
      for await (const chunk of await withTools.stream([new HumanMessage('call get_weather {"city":"Oslo"}')])) {
        merged = merged ? merged.concat(chunk as AIMessageChunk) : (chunk as AIMessageChunk);
      }
      expect(merged?.tool_calls).toHaveLength(1);
      expect(merged?.tool_calls?.[0].args).toEqual({ city: 'Oslo' });
    });
  });
});
