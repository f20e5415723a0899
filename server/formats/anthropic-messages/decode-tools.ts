/**
 * Anthropic Messages `tools` and `tool_choice` → canonical tool definitions and tool choice. Server tools are
 * dropped with a warning; `disable_parallel_tool_use` becomes `parallelToolCalls: false`.
 */
import type { ToolChoice, ToolDefinition } from '../../core/chat.js';
import { hasValue, noteCacheControl, type Warn } from './decode-warnings.js';
import type { AnthropicTool, AnthropicToolChoice, AnthropicToolUnion } from './wire-types.js';

/**
 * A client tool has no `type` or `custom`. A type guard rather than a `type` check: the generated
 * `AnthropicServerTool` has `type: string`, which `custom` also matches, so the union cannot be narrowed by
 * comparing `type`.
 */
function isClientTool(tool: AnthropicToolUnion): tool is AnthropicTool {
  return tool.type === undefined || tool.type === null || tool.type === 'custom';
}

export function decodeTools(tools: AnthropicToolUnion[], warn: Warn): ToolDefinition[] {
  const definitions: ToolDefinition[] = [];
  for (const tool of tools) {
    noteCacheControl(tool, warn);
    if (!isClientTool(tool)) {
      warn(`tools.${tool.name}`, `server tool '${tool.type}' is not supported; the tool was dropped`);
      continue;
    }
    if (hasValue(tool.eager_input_streaming)) {
      warn('eager_input_streaming', 'tool input is always streamed as it is produced; the flag is ignored');
    }
    if (hasValue(tool.defer_loading)) {
      warn('defer_loading', 'tool search is not supported; deferred tools are sent with the others');
    }
    const definition: ToolDefinition = { name: tool.name, parameters: tool.input_schema ?? { type: 'object' } };
    if (typeof tool.description === 'string') {
      definition.description = tool.description;
    }
    if (typeof tool.strict === 'boolean') {
      definition.strict = tool.strict;
    }
    definitions.push(definition);
  }
  return definitions;
}

export function decodeToolChoice(choice: AnthropicToolChoice): { toolChoice: ToolChoice; parallelToolCalls?: boolean } {
  const parallel =
    'disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use === true
      ? { parallelToolCalls: false }
      : {};
  switch (choice.type) {
    case 'auto':
      return { toolChoice: { type: 'auto' }, ...parallel };
    case 'any':
      return { toolChoice: { type: 'required' }, ...parallel };
    case 'tool':
      return { toolChoice: { type: 'tool', name: choice.name }, ...parallel };
    case 'none':
      return { toolChoice: { type: 'none' } };
  }
}
