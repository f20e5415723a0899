/**
 * Responses `tools` and `tool_choice` → canonical tool definitions and choice.
 *
 * Only function tools reach a provider. Codex's `namespace` tool is flattened into its function tools under
 * their own names, and the namespace of each is remembered (`namespaces`), so the encoders can put it back on
 * the `function_call` items that call them: Codex routes a call by namespace and name. Hosted tools
 * (`web_search`, `file_search`, `mcp`, `custom`, …) cannot be run on an arbitrary provider and are dropped with
 * a warning. Tool parameter schemas pass through untouched.
 *
 * Tool names must be unique after flattening: the first tool of a name wins and later ones are dropped with a
 * warning, whether they are plain or namespaced. So when a namespaced and a plain function share a name, the
 * one listed first is offered, and a call of that name carries a namespace only if the first one had one.
 */
import { ApiError } from '../../core/api-error.js';
import type { ToolChoice, ToolDefinition } from '../../core/chat.js';
import type { CallWarning } from '../../core/call-context.js';
import type {
  FunctionToolEcho,
  FunctionToolParam,
  NamespaceToolParam,
  ToolChoiceEcho,
  ToolChoiceParam,
  ToolParam,
} from './wire-types.js';

/** What a function tool without `parameters` takes: nothing. */
const EMPTY_PARAMETERS: Record<string, unknown> = { type: 'object', properties: {} };

export interface DecodedTools {
  tools: ToolDefinition[];
  /** The honoured tools, as the response object echoes them. */
  echo: FunctionToolEcho[];
  /** Flattened tool name → the name of the `namespace` tool it came from; plain function tools are absent. */
  namespaces: Map<string, string>;
}

export function decodeTools(
  tools: readonly ToolParam[] | null | undefined,
  warn: (warning: CallWarning) => void,
): DecodedTools {
  const decoded: DecodedTools = { tools: [], echo: [], namespaces: new Map() };
  const names = new Set<string>();
  const add = (tool: FunctionToolParam, namespace?: string): void => {
    if (names.has(tool.name)) {
      warn({ field: 'tools', reason: `a second tool named '${tool.name}' was dropped` });
      return;
    }
    names.add(tool.name);
    if (namespace !== undefined) {
      decoded.namespaces.set(tool.name, namespace);
    }
    const parameters = tool.parameters ?? EMPTY_PARAMETERS;
    const definition: ToolDefinition = { name: tool.name, parameters };
    if (typeof tool.description === 'string') {
      definition.description = tool.description;
    }
    if (typeof tool.strict === 'boolean') {
      definition.strict = tool.strict;
    }
    decoded.tools.push(definition);
    decoded.echo.push({
      type: 'function',
      name: tool.name,
      description: tool.description ?? null,
      parameters,
      strict: tool.strict ?? null,
    });
  };

  // The contract admits function, namespace (of function tools only) and web search tools; the spec validator
  // answers 400 to anything else, so the warnings for other tool types are defensive (the types narrow those
  // branches to `never`).
  for (const tool of tools ?? []) {
    if (tool.type === 'function') {
      add(tool as FunctionToolParam);
    } else if (tool.type === 'namespace') {
      const namespace = tool as NamespaceToolParam;
      warn({
        field: 'tools.namespace',
        reason: 'namespace tools are flattened: their function tools are offered under their own names',
      });
      for (const inner of namespace.tools ?? []) {
        if (inner.type === 'function') {
          add(inner as FunctionToolParam, namespace.name);
        } else {
          warn({
            field: `tools.namespace.${inner.type}`,
            reason: `'${inner.type}' tools inside a namespace are not supported and were dropped`,
          });
        }
      }
    } else {
      warn({
        field: `tools.${tool.type}`,
        reason: `'${tool.type}' tools are not supported by this gateway and were dropped`,
      });
    }
  }
  return decoded;
}

export interface DecodedToolChoice {
  toolChoice?: ToolChoice;
  echo: ToolChoiceEcho;
}

export function decodeToolChoice(
  choice: ToolChoiceParam | null | undefined,
  tools: readonly ToolDefinition[],
  warn: (warning: CallWarning) => void,
): DecodedToolChoice {
  const decoded = decodeChoice(choice, tools, warn);
  if (tools.length === 0 && decoded.toolChoice) {
    // Upstreams reject a tool choice without tools; with none left there is nothing to choose from.
    if (decoded.toolChoice.type === 'required' || decoded.toolChoice.type === 'tool') {
      warn({ field: 'tool_choice', reason: 'no supported tools remain, so tool_choice was dropped' });
    }
    return { echo: decoded.echo };
  }
  return decoded;
}

function decodeChoice(
  choice: ToolChoiceParam | null | undefined,
  tools: readonly ToolDefinition[],
  warn: (warning: CallWarning) => void,
): DecodedToolChoice {
  if (choice === null || choice === undefined) {
    return { echo: 'auto' };
  }
  if (choice === 'auto' || choice === 'none' || choice === 'required') {
    return { toolChoice: { type: choice }, echo: choice };
  }
  if (typeof choice !== 'object') {
    throw new ApiError(400, `Unknown tool_choice '${String(choice)}'.`, {
      param: 'tool_choice',
      code: 'invalid_value',
    });
  }
  if (choice.type === 'function') {
    const name = (choice as { name?: unknown }).name;
    if (typeof name !== 'string' || !tools.some((tool) => tool.name === name)) {
      throw new ApiError(
        400,
        `tool_choice names the function '${String(name)}', which is not among the function tools.`,
        {
          param: 'tool_choice',
          code: 'invalid_value',
        },
      );
    }
    return { toolChoice: { type: 'tool', name }, echo: { type: 'function', name } };
  }
  // Not in the contract (the spec validator rejects it); kept for callers that reach the decoder directly.
  if (choice.type === 'allowed_tools') {
    const mode = (choice as { mode?: unknown }).mode === 'required' ? 'required' : 'auto';
    warn({
      field: 'tool_choice.allowed_tools',
      reason: `allowed_tools cannot restrict the offered tools here; treated as '${mode}'`,
    });
    return { toolChoice: { type: mode }, echo: mode };
  }
  warn({ field: 'tool_choice', reason: `tool_choice of type '${choice.type}' is not supported and was dropped` });
  return { echo: 'auto' };
}
