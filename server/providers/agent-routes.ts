/**
 * Routes for the model names coding agents send on their own. Claude Code asks for `claude-*` models in up
 * to five slots (including a small fast model for background calls); Codex and the OpenAI SDKs ask for
 * `gpt-*`, `o<digit>*` and `codex-*`. So that pointing an agent at Omnigate needs nothing but a base URL
 * and a key, these names are routed after the user's own rules: Claude names to the configured Anthropic
 * upstream if there is one, every such name otherwise to the default chat model. Any other unknown
 * name is still a 404. `agent_routes: false` in the config turns this off.
 */
import type { Config, RouteConfig } from '../config.js';
import { LOCAL_CHAT_MODEL_ID } from './local/chat.js';

const OPENAI_AGENT_PATTERNS = ['gpt-*', 'o1*', 'o3*', 'o4*', 'codex-*'];

export function agentRoutes(config: Pick<Config, 'providers' | 'defaultChatModel' | 'agentRoutes'>): RouteConfig[] {
  if (!config.agentRoutes) {
    return [];
  }
  const fallback = config.defaultChatModel ?? LOCAL_CHAT_MODEL_ID;
  const anthropic = config.providers.find((provider) => provider.type === 'anthropic');
  return [
    anthropic ? { pattern: 'claude-*', provider: anthropic.id } : { pattern: 'claude-*', model: fallback },
    ...OPENAI_AGENT_PATTERNS.map((pattern) => ({ pattern, model: fallback })),
  ];
}
