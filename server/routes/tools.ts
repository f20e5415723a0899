/**
 * `POST /v1/tools/{tool}`: a tool run directly, answering the contract's tool result. The tool module is the
 * one MCP's `tools/call` runs (tools/), so both surfaces answer alike; here errors are plain HTTP errors.
 */
import type { z } from 'zod';
import { ApiError } from '../core/api-error.js';
import { randomId } from '../core/random-id.js';
import type { AppDeps } from './app-deps.js';
import { scopeOf } from '../http/call-scope.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import { imageUnderstandingTool } from '../tools/image-understanding.js';
import type { Tool } from '../tools/tool-definition.js';
import { transcribeAudioTool } from '../tools/transcribe-audio.js';
import { webSearchTool } from '../tools/web-search.js';

type ToolRouteDeps = Pick<
  AppDeps,
  | 'registry'
  | 'mediaPool'
  | 'logger'
  | 'shutdownSignal'
  | 'now'
  | 'media'
  | 'videos'
  | 'files'
  | 'search'
  | 'tools'
  | 'transcription'
>;

const noProgress = async (): Promise<void> => undefined;

/**
 * The validator has checked the body against the contract; the tool's own schema agrees with it, so a refusal
 * here would be a drift between the two, answered as the 400 it is rather than a crash.
 */
function toolInput<I extends z.ZodObject>(tool: Tool<I>, body: unknown): z.output<I> {
  const parsed = tool.input.safeParse(body);
  if (!parsed.success) {
    throw new ApiError(400, parsed.error.issues[0]?.message ?? 'Invalid tool arguments.', {
      param: parsed.error.issues[0]?.path.join('.'),
    });
  }
  return parsed.data;
}

export function toolHandlers(deps: ToolRouteDeps): {
  invokeImageUnderstandingTool: OperationHandler<'invokeImageUnderstandingTool'>;
  invokeWebSearchTool: OperationHandler<'invokeWebSearchTool'>;
  invokeTranscribeAudioTool: OperationHandler<'invokeTranscribeAudioTool'>;
} {
  return {
    async invokeImageUnderstandingTool(req, res) {
      const input = toolInput(imageUnderstandingTool, req.body);
      const { output } = await imageUnderstandingTool.run(input, { deps, scope: scopeOf(res), progress: noProgress });
      res.json(output satisfies ResponseBody<'invokeImageUnderstandingTool', 200>);
    },
    async invokeWebSearchTool(req, res) {
      const input = toolInput(webSearchTool, req.body);
      const { output, text } = await webSearchTool.run(input, { deps, scope: scopeOf(res), progress: noProgress });
      const body = {
        object: 'tool.result' as const,
        tool: 'web_search' as const,
        id: randomId('tr'),
        output,
        content: text,
      };
      res.json(body satisfies ResponseBody<'invokeWebSearchTool', 200>);
    },
    async invokeTranscribeAudioTool(req, res) {
      const input = toolInput(transcribeAudioTool, req.body);
      const { output, text } = await transcribeAudioTool.run(input, {
        deps,
        scope: scopeOf(res),
        progress: noProgress,
      });
      const body = {
        object: 'tool.result' as const,
        tool: 'transcribe_audio' as const,
        id: randomId('tr'),
        output,
        content: text,
      };
      res.json(body satisfies ResponseBody<'invokeTranscribeAudioTool', 200>);
    },
  };
}
