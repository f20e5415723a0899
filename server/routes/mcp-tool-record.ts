/**
 * The record of one MCP tool call inside its HTTP request's record. A JSON-RPC batch runs several tools/call on
 * one POST, so one request record would carry the figures of whichever tool wrote last, and every tool call's
 * limit settlement would settle that same record's figures again (a batch of two chats counted the last chat's
 * tokens and cost twice). Each tool call instead fills a record of its own, settles it exactly once when the
 * tool returns, and adds its figures to the request's record (tokens and media summed, cost summed as settled).
 */
import { callOutcome, type CallEndListener, type CallRecord, type CostOf } from '../usage/call-record.js';
import type { Usage } from '../core/chat.js';
import type { MediaUsage } from '../core/models.js';

export interface ToolCallRecord {
  record: CallRecord;
  /** Ends the tool call: settles its listeners and adds its figures to the request's record (once). */
  end(status: number): void;
}

/** The settled costs of the tool calls of each request record: the request's usage record carries their sum. */
const toolCosts = new WeakMap<CallRecord, { sum: number }>();

function addUsage(a: Usage | null, b: Usage | null): Usage | null {
  if (!a || !b) {
    return a ?? b;
  }
  const sum = (x: number | undefined, y: number | undefined) =>
    x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0);
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: sum(a.cacheReadTokens, b.cacheReadTokens),
    cacheWriteTokens: sum(a.cacheWriteTokens, b.cacheWriteTokens),
    reasoningTokens: sum(a.reasoningTokens, b.reasoningTokens),
  };
}

function addMedia(a: MediaUsage | null, b: MediaUsage | null): MediaUsage | null {
  if (!a || !b) {
    return a ?? b;
  }
  const sum: MediaUsage = { ...a };
  for (const [name, value] of Object.entries(b) as Array<[keyof MediaUsage, number | undefined]>) {
    if (value !== undefined) {
      sum[name] = (sum[name] ?? 0) + value;
    }
  }
  return sum;
}

export function toolCallRecord(parent: CallRecord, operation: string, costOf: CostOf = () => 0): ToolCallRecord {
  const listeners: CallEndListener[] = [];
  let ended: { status: number; costUsd: number } | undefined;
  const record: CallRecord = {
    operation,
    modelRequested: null,
    model: null,
    provider: null,
    usage: null,
    units: null,
    media: null,
    // A tool call ends when the tool returns: a tool that would stream still ends with its call.
    defer() {},
    complete() {},
    whenEnded(listener) {
      if (ended) {
        listener(callOutcome(record, ended.status, ended.costUsd), ended.costUsd);
      } else {
        listeners.push(listener);
      }
    },
  };
  parent.operation = operation;
  let costs = toolCosts.get(parent);
  if (!costs) {
    const total = { sum: 0 };
    costs = total;
    toolCosts.set(parent, total);
    // The request's record carries what its tool calls cost, each as it settled (a video's at its estimate).
    parent.whenEnded(() => total.sum);
  }
  const parentCosts = costs;
  return {
    record,
    end(status) {
      if (ended) {
        return;
      }
      let costUsd = costOf(record);
      for (const listener of listeners) {
        costUsd = listener(callOutcome(record, status, costUsd), costUsd) ?? costUsd;
      }
      ended = { status, costUsd };
      parentCosts.sum += costUsd;
      parent.operation = record.operation;
      parent.modelRequested = record.modelRequested ?? parent.modelRequested;
      parent.model = record.model ?? parent.model;
      parent.provider = record.provider ?? parent.provider;
      // Where a model with deployments served the tool's call (the request's record shows the last such call).
      if (record.deployment !== undefined) {
        parent.deployment = record.deployment;
        parent.attempts = record.attempts;
      }
      if (record.searchDeployment !== undefined) {
        parent.searchDeployment = record.searchDeployment;
        parent.searchAttempts = record.searchAttempts;
      }
      parent.usage = addUsage(parent.usage, record.usage);
      parent.media = addMedia(parent.media, record.media);
      parent.units = record.units === null ? parent.units : (parent.units ?? 0) + record.units;
    },
  };
}
