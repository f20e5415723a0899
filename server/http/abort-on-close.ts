/**
 * An AbortSignal that fires when the client goes away before the response finished, or when the server
 * shuts down. Providers get it so the upstream call stops as soon as nobody is listening.
 */
import type { Response } from 'express';

export function abortOnClose(res: Response, shutdown?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) {
      controller.abort(new Error('client disconnected'));
    }
  });
  return shutdown ? AbortSignal.any([controller.signal, shutdown]) : controller.signal;
}
