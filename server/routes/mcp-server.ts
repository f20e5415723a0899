/**
 * The MCP server of one `/v1/mcp` request (the v2 SDK builds one per request; stateless): every tool of
 * tools/tool-list.ts, registered with its own schemas, run with the HTTP request it arrived on (passed through
 * the SDK as `authInfo.extra`, after our bearer auth accepted the key); unknown arguments are refused. A tool's failure is a result with
 * `isError: true` and the error's message, never a JSON-RPC error; media goes out as MCP image/audio content
 * when small, and as a `resource_link` to our signed URL otherwise (video always).
 */
import { McpServer, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { ApiError } from '../core/api-error.js';
import type { CallScope } from '../http/call-scope.js';
import type { CallLimiter } from '../limits/call-limiter.js';
import type { Tool, ToolDeps, ToolInvocation, ToolOutcome } from '../tools/tool-definition.js';
import { TOOLS } from '../tools/tool-list.js';
import type { CostOf } from '../usage/call-record.js';
import { toolCallRecord } from './mcp-tool-record.js';

export const MCP_INSTRUCTIONS =
  'Omnigate tools: image understanding, image, speech, music and video generation, questions to the configured chat models, search (results or a cited answer), the files uploaded with your API key (list_files, read_file), and embeddings (embed). Media comes back inline when small and always as a signed URL.';

/** What the route hands the SDK for one request: its call scope. */
export interface McpRequestScope {
  scope: CallScope;
}

type ContentBlock = CallToolResult['content'][number];

function contentOf(outcome: ToolOutcome<unknown>): ContentBlock[] {
  const blocks: ContentBlock[] = [{ type: 'text', text: outcome.text }];
  for (const media of outcome.media ?? []) {
    if (media.data && (media.kind === 'image' || media.kind === 'audio')) {
      blocks.push({ type: media.kind, data: Buffer.from(media.data).toString('base64'), mimeType: media.mediaType });
    } else {
      blocks.push({ type: 'resource_link', uri: media.url, name: media.name, mimeType: media.mediaType });
    }
  }
  return blocks;
}

function failureText(error: unknown, logger: Logger, tool: string): string {
  if (error instanceof ApiError && error.status < 500) {
    return `${error.message}${error.param ? ` (parameter: ${error.param})` : ''} [${error.status}${error.code ? ` ${error.code}` : ''}]`;
  }
  if (error instanceof ApiError) {
    logger.warn({ tool, err: error }, 'MCP tool call failed');
    return `${error.message} [${error.status}${error.code ? ` ${error.code}` : ''}]`;
  }
  logger.error({ tool, err: error }, 'MCP tool call failed unexpectedly');
  return 'The tool failed unexpectedly; the server log has the details.';
}

function progressOf(context: ServerContext): ToolInvocation['progress'] {
  const token = context.mcpReq._meta?.progressToken;
  return async (progress, total, message) => {
    if (token === undefined) {
      return;
    }
    await context.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } })
      .catch(() => undefined);
  };
}

export function buildMcpServer(
  deps: ToolDeps & { version?: string; limiter?: CallLimiter; costOf?: CostOf },
  { scope }: McpRequestScope,
): McpServer {
  const server = new McpServer(
    { name: 'omnigate', version: deps.version ?? '0.0.0' },
    { capabilities: { tools: { listChanged: false } }, instructions: MCP_INSTRUCTIONS },
  );
  for (const tool of TOOLS as readonly Tool[]) {
    server.registerTool(
      tool.name,
      // Strict: an argument the tool does not know is refused naming it (zod's unrecognized_keys), not dropped,
      // as REST refuses it through the contract's additionalProperties: false; tools/list shows the same.
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input.strict(),
        outputSchema: tool.output,
        annotations: tool.annotations,
      },
      async (input: unknown, context: ServerContext): Promise<CallToolResult> => {
        // A record of this tool call's own (a JSON-RPC batch holds several on one request): it settles the
        // limits once, and its figures are added to the request's usage record.
        const toolCall = toolCallRecord(scope.call, `mcpPost:${tool.name}`, deps.costOf);
        const record = toolCall.record;
        const toolScope: CallScope = Object.create(scope, { call: { value: record } });
        let status = 200;
        try {
          // Each tool call meets the key's limits (the HTTP request itself is not limited: initialize and
          // tools/list spend nothing); a refusal is the tool's error result, its message saying when to retry.
          await deps.limiter?.begin({
            key: scope.key,
            call: record,
            operation: record.operation,
            body: input,
            bodyBytes: JSON.stringify(input ?? null).length,
            requestId: scope.requestId,
            setHeader: scope.setHeader,
          });
          const outcome = await tool.run(input as never, { deps, scope: toolScope, progress: progressOf(context) });
          return { content: contentOf(outcome), structuredContent: outcome.output as Record<string, unknown> };
        } catch (error) {
          status = error instanceof ApiError ? error.status : 500;
          return { isError: true, content: [{ type: 'text', text: failureText(error, deps.logger, tool.name) }] };
        } finally {
          toolCall.end(status);
        }
      },
    );
  }
  return server;
}
