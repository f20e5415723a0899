// A tool's run, driven by a call scope built by hand: no Express, no server, no socket.
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRegistry } from '../providers/build-registry.js';
import { scopeFor } from '../../test/helpers/call-scope.js';
import { chatTool } from './chat.js';
import type { ToolDeps } from './tool-definition.js';

const registry = buildRegistry({ providers: [], models: [], aliases: {}, routes: [] });
const deps = { registry, logger: pino({ level: 'silent' }) };
afterAll(() => registry.close());

describe("a tool's run with a call scope", () => {
  it('the chat tool answers with the built-in model and records its usage on the scope', async () => {
    const { scope, record } = scopeFor();
    const outcome = await chatTool.run(
      { prompt: 'Say something about seams.' },
      { deps: deps as unknown as ToolDeps, scope, progress: async () => {} },
    );
    expect(outcome.output.model).toBe('local:chat');
    expect(outcome.output.content.length).toBeGreaterThan(0);
    expect(outcome.text).toBe(outcome.output.content);
    expect(record.model).toBe('local:chat');
    expect(record.usage?.outputTokens).toBe(outcome.output.usage.output_tokens);
    expect(record.usage?.outputTokens).toBeGreaterThan(0);
  });

  it("the chat tool refuses a model the scope's key may not use, before any generation", async () => {
    const { scope, record } = scopeFor(['local:image']);
    await expect(
      chatTool.run({ prompt: 'hi' }, { deps: deps as unknown as ToolDeps, scope, progress: async () => {} }),
    ).rejects.toMatchObject({ status: 403 });
    expect(record.usage).toBeNull();
  });
});
