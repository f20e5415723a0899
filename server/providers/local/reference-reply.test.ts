import { describe, expect, it } from 'vitest';
import type { ChatCallOptions } from '../../core/chat.js';
import { referenceReply } from './reference-reply.js';

const TOOLS = [
  { name: 'get_weather', parameters: { type: 'object' } },
  { name: 'get_weather_alerts', parameters: { type: 'object' } },
  { name: 'search', parameters: { type: 'object' } },
];

function ask(text: string, options: Partial<ChatCallOptions> = {}) {
  return referenceReply({ messages: [{ role: 'user', content: [{ type: 'text', text }] }], tools: TOOLS, ...options });
}

describe('referenceReply: tool calls', () => {
  it.each([
    ['call get_weather {"city":"Paris"}', 'get_weather', '{"city":"Paris"}'],
    ['Please call get_weather with {"city":"Paris"}', 'get_weather', '{"city":"Paris"}'],
    [
      'With {"city":"Oslo", "unit":"c"} in mind, could you call get_weather_alerts?',
      'get_weather_alerts',
      '{"city":"Oslo","unit":"c"}',
    ],
    ['Call search {"q":"a {brace} in a string"} please', 'search', '{"q":"a {brace} in a string"}'],
    ['call get_weather {not json} then {"city":"Rome"}', 'get_weather', '{"city":"Rome"}'],
    ['call get_weather', 'get_weather', '{}'],
    ['First search, then get_weather: call them {"q":"x"}', 'search', '{"q":"x"}'],
  ])('%s → %s %s', (text, name, args) => {
    expect(ask(text)).toEqual({ kind: 'tool-call', name, arguments: args });
  });

  it('does not call a tool when the message does not say call', () => {
    expect(ask('What does get_weather return for {"city":"Paris"}?')).toMatchObject({ kind: 'text' });
  });

  it('does not take a longer identifier for an offered name', () => {
    expect(ask('call my_search_engine {"q":"x"}')).toMatchObject({ kind: 'text' });
  });

  it('does not call a tool that is not offered, or with tool_choice none', () => {
    expect(ask('call get_time {}')).toMatchObject({ kind: 'text' });
    expect(ask('call get_weather {}', { toolChoice: { type: 'none' } })).toMatchObject({ kind: 'text' });
  });

  it('gives {} for a message of nothing but braces', () => {
    expect(ask(`call search ${'{'.repeat(4000)}${'}'.repeat(4000)}`)).toMatchObject({
      kind: 'tool-call',
      name: 'search',
      arguments: '{}',
    });
  });
});
