/**
 * The one decision every text route makes: when the resolved model speaks the caller's dialect natively,
 * pass the call through (the caller's body, the upstream's answer, usage parsed on the way); otherwise run the
 * route's translation onto the canonical core.
 */
import type { Response } from 'express';
import type { Dialect } from '../../core/chat.js';
import { forwardNative, type ForwardOptions } from './forward-native.js';
import type { ResolvedChat } from './run-chat-call.js';

export async function forwardOrTranslate(
  res: Response,
  chat: ResolvedChat,
  dialect: Dialect,
  forward: () => Omit<ForwardOptions, 'dialect'>,
  translate: () => Promise<void>,
): Promise<void> {
  const native = chat.model.passthrough?.[dialect];
  if (native) {
    await forwardNative(res, chat, native, { dialect, ...forward() });
  } else {
    await translate();
  }
}
