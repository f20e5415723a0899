/** One stateless MCP tools/call over supertest (the 2025-11-25 leg), answered as an SSE stream of one JSON-RPC response. */
import type { Express } from 'express';
import request from 'supertest';
import { expect } from 'vitest';

export interface McpToolResult {
  isError?: boolean;
  content: Array<{ text?: string }>;
}

export async function mcpToolCall(
  app: Express,
  key: string,
  name: string,
  args: Record<string, unknown>,
): Promise<McpToolResult> {
  const res = await request(app)
    .post('/v1/mcp')
    .set('authorization', `Bearer ${key}`)
    .set('accept', 'application/json, text/event-stream')
    .set('mcp-protocol-version', '2025-11-25')
    .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
  expect(res.status).toBe(200);
  const data = /^data: (.+)$/m.exec(res.text)?.[1];
  return (JSON.parse(data ?? 'null') as { result: McpToolResult }).result;
}
