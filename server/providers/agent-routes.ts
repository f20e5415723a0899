/**
 * Routes for the model names coding agents send on their own. Claude Code asks for `claude-*` models in up
 * to five slots (including a small fast model for background calls); Codex and the OpenAI SDKs ask for
 * `gpt-*`, `o<digit>*` and `codex-*`. So that pointing an agent at Omnigate needs nothing but a base URL
 * and a key, these names are routed after the user's own rules: Claude names to the configured Anthropic
 * upstream if there is one, OpenAI names to the configured OpenAI-compatible upstream if there is exactly one
 * (with several, which one is meant is the user's rule to write), each under its own name. A family without its
 * upstream goes to the default chat model instead — the built-in echo model unless `default_chat_model` names
 * another — as a *stand-in*: the answer carries an `x-omnigate-warning` header and the server logs a warning,
 * so `gpt-4o` answered by the echo model is never mistaken for GPT-4o. Stand-ins stay answers, not 404s,
 * because Claude Code and Codex send these names on their own and must keep working offline against the
 * built-in model (shared/research/real-clients.md). Any other unknown name is still a 404.
 * `agent_routes: false` in the config turns this off.
 */
import type { Config, RouteConfig } from '../config.js';
import { LOCAL_CHAT_MODEL_ID } from './local/chat.js';

const OPENAI_AGENT_PATTERNS = ['gpt-*', 'o1*', 'o3*', 'o4*', 'codex-*'];

/** A route; `standIn` marks one that answers a name with another model than the one it names. */
export type AgentRoute = RouteConfig & { standIn?: boolean };

export function agentRoutes(config: Pick<Config, 'providers' | 'defaultChatModel' | 'agentRoutes'>): AgentRoute[] {
  if (!config.agentRoutes) {
    return [];
  }
  const fallback = config.defaultChatModel ?? LOCAL_CHAT_MODEL_ID;
  const anthropic = config.providers.find((provider) => provider.type === 'anthropic');
  const openAiCompatible = config.providers.filter((provider) => provider.type === 'openai-compatible');
  const openAi = openAiCompatible.length === 1 ? openAiCompatible[0] : undefined;
  return [
    anthropic
      ? { pattern: 'claude-*', provider: anthropic.id }
      : { pattern: 'claude-*', model: fallback, standIn: true },
    ...OPENAI_AGENT_PATTERNS.map((pattern) =>
      openAi ? { pattern, provider: openAi.id } : { pattern, model: fallback, standIn: true },
    ),
  ];
}
