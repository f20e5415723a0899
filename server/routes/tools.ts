/**
 * `POST /v1/tools/{tool}`: a tool run directly, answering the contract's tool result. The tool module is the
 * one MCP's `tools/call` runs (tools/), so both surfaces answer alike; here errors are plain HTTP errors.
 */
import type { Request } from 'express';
import { ApiError } from '../core/api-error.js';
import type { AppDeps } from './app-deps.js';
import type { OperationHandler, ResponseBody } from '../http/operation-types.js';
import { imageUnderstandingTool } from '../tools/image-understanding.js';

type ToolRouteDeps = Pick<AppDeps, 'registry' | 'logger' | 'shutdownSignal' | 'now' | 'media' | 'videos' | 'files' | 'search' | 'tools'>;

const noProgress = async (): Promise<void> => undefined;

export function toolHandlers(deps: ToolRouteDeps): { invokeImageUnderstandingTool: OperationHandler<'invokeImageUnderstandingTool'> } {
  return {
    async invokeImageUnderstandingTool(req, res) {
      // The validator has checked the body against the contract; the tool's own schema agrees with it, so a
      // refusal here would be a drift between the two, answered as the 400 it is rather than a crash.
      const parsed = imageUnderstandingTool.input.safeParse(req.body);
      if (!parsed.success) {
        throw new ApiError(400, parsed.error.issues[0]?.message ?? 'Invalid tool arguments.', { param: parsed.error.issues[0]?.path.join('.') });
      }
      const { output } = await imageUnderstandingTool.run(parsed.data, { deps, req: req as Request, res, progress: noProgress });
      res.json(output satisfies ResponseBody<'invokeImageUnderstandingTool', 200>);
    },
  };
}
