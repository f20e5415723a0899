/**
 * What every call of every capability carries besides its options: the abort signal, the request id, and
 * the channel for fields the provider cannot honour.
 */

/** A request field the caller sent that the chosen provider cannot honour; logged once, then dropped. */
export interface CallWarning {
  field: string;
  reason: string;
}

/** Per-call context every provider call gets. */
export interface CallContext {
  /** Aborted when our client disconnects or the server shuts down; providers must stop the upstream call. */
  signal: AbortSignal;
  requestId: string;
  /**
   * The id of the API key the call is made with: work queued for it (the media engines' pool) is counted and
   * served per key, so one key cannot take the others' turns. Unset for work no key asked for.
   */
  owner?: string;
  /** Collects fields the provider could not honour. */
  warn: (warning: CallWarning) => void;
  /**
   * Told, once per model call, which deployment served it (the last one tried when none did) and how many
   * upstream attempts it took (providers/resilience/); only models with deployments, retries or fallbacks tell.
   */
  attempted?(outcome: AttemptOutcome): void;
  /**
   * Told as each upstream attempt of the retry layer starts (before any answer), with the target it goes to:
   * the video queue counts a task's attempts over its queue runs with it. Same models as `attempted`.
   */
  attemptStarted?(target: { deployment: string; provider: string }): void;
}

/**
 * What the retry layer says about one call: the deployment's id (`provider:model` unless named), the provider
 * it runs on (a fallback's may be another than the model's first deployment's) and the attempts made.
 */
export interface AttemptOutcome {
  deployment: string | null;
  provider: string | null;
  attempts: number;
}
