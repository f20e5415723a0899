/**
 * The backends every client is run against: the built-in reference model, and each scripted fake upstream
 * behind the gateway (so the client's dialect is either passed through natively or translated).
 */
import type { FakeUpstream } from '../../fakes/fake-upstream.js';
import { startAnthropicFake, startOpenAIFake } from './fakes.js';
import { fakeProviders, startGateway, type Gateway, type GatewayConfig } from './gateway.js';

export type BackendName = 'local' | 'anthropic-fake' | 'openai-fake';

export interface Backend {
  name: BackendName;
  gateway: Gateway;
  fake?: FakeUpstream;
  /** What the final answer of a tool loop starts with, before the tool's output. */
  toolReport(toolName: string): string;
  /** What a plain prompt's answer starts with, before the echoed prompt. */
  echo: string;
  close(): Promise<void>;
}

export const BACKENDS: BackendName[] = ['local', 'anthropic-fake', 'openai-fake'];

/**
 * Starts a gateway for `name`. Agent model names (`claude-*`, `gpt-*`, …) reach the backend through the
 * built-in agent routes (local, or the Anthropic provider for `claude-*`) or through `routes` given here.
 */
export async function startBackend(
  name: BackendName,
  extra: Pick<GatewayConfig & object, 'routes' | 'models'> = {},
): Promise<Backend> {
  if (name === 'local') {
    const gateway = await startGateway({ ...extra });
    return {
      name,
      gateway,
      toolReport: (tool) => `Tool ${tool} returned: `,
      echo: 'You said: ',
      close: () => gateway.close(),
    };
  }
  const fake = name === 'anthropic-fake' ? await startAnthropicFake() : await startOpenAIFake();
  const providers = fakeProviders(name === 'anthropic-fake' ? { anthropic: fake.origin } : { openai: fake.origin });
  const provider = name === 'anthropic-fake' ? 'anth' : 'oai';
  // Every agent name goes to the fake (the user's routes come before the built-in agent routes).
  const routes = extra.routes ?? ['claude-*', 'gpt-*', 'o4*', 'codex-*'].map((pattern) => ({ pattern, provider }));
  const gateway = await startGateway({ providers, routes, models: extra.models });
  const label = name === 'anthropic-fake' ? 'Anthropic fake' : 'OpenAI fake';
  return {
    name,
    gateway,
    fake,
    toolReport: () => `${label} got the tool result: `,
    echo: `${label} says: `,
    async close() {
      await gateway.close();
      await fake.close();
    },
  };
}
