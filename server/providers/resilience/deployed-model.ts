/**
 * A model with deployments, as the interface of its capability: the registry hands callers this instead of one
 * provider's model, so chat (translated and native passthrough, all three dialects), images, speech, music,
 * video, search, embeddings and rerank — and the tools and MCP, which call the same code — all pass through one retry layer
 * (resilience-plan.ts). Each method runs the plan with an attempt that calls the chosen deployment's model
 * with the attempt's signal; streams and passthrough answers are committed at their first part or bytes.
 */
import type { CallContext } from '../../core/call-context.js';
import type {
  ChatCallOptions,
  ChatModel,
  ChatStreamPart,
  Dialect,
  NativePassthrough,
  PassthroughContext,
  PassthroughResponse,
} from '../../core/chat.js';
import type {
  AudioContainer,
  EmbeddingModel,
  ImageModel,
  ModelByType,
  ModelType,
  MusicModel,
  RerankModel,
  SearchModel,
  SpeechModel,
  TranscriptionModel,
  TranscriptionStreamPart,
  VideoModel,
  VideoTaskContext,
} from '../../core/models.js';
import {
  type Committed,
  runResilient,
  type ResiliencePlan,
  type ResilienceRuntime,
  type Target,
} from './resilience-plan.js';

const DIALECTS: readonly Dialect[] = ['openai-chat', 'openai-responses', 'anthropic-messages'];

/** The context of one attempt: the caller's, with the attempt's signal (caller gone, or the budget spent). */
function withSignal<C extends CallContext>(context: C, signal: AbortSignal): C {
  return { ...context, signal };
}

function once<M, R>(
  plan: ResiliencePlan<M>,
  runtime: ResilienceRuntime,
  context: CallContext,
  call: (model: M, signal: AbortSignal, target: Target<M>) => Promise<R>,
): Promise<R> {
  return runResilient(plan, runtime, context, (target, signal) => call(target.model(), signal, target)).then(
    finishedAtOnce,
  );
}

/** A call whose answer is whole when committed is over then. */
function finishedAtOnce<M, R>(committed: Committed<M, R>): R {
  committed.done();
  return committed.value;
}

/**
 * A stream through the retry layer, committed at its first part: a failure before it is retried on the next
 * target, one after it reaches the caller. Nothing runs until the caller asks for the first part.
 */
function streamOnce<M, P>(
  plan: ResiliencePlan<M>,
  runtime: ResilienceRuntime,
  context: CallContext,
  open: (model: M, attempt: CallContext) => AsyncIterable<P>,
): AsyncIterable<P> {
  return {
    [Symbol.asyncIterator]: () => {
      let inner: AsyncIterator<P> | undefined;
      const start = async () => {
        const committed = await runResilient(plan, runtime, context, async (target, signal) => {
          const iterator = open(target.model(), withSignal(context, signal))[Symbol.asyncIterator]();
          const head = await iterator.next();
          return { iterator, head };
        });
        inner = new Resumed(committed.value.iterator, committed.value.head, committed.done);
        return inner.next();
      };
      return {
        // After the first part, straight to the committed stream: no extra promise per part here.
        next: () => (inner ? inner.next() : start()),
        async return(value?: unknown) {
          await inner?.return?.(value);
          return { done: true, value: undefined as unknown as P };
        },
      };
    },
  };
}

/**
 * The rest of an iterator after its first result was taken (the attempt's commit), then what follows straight from
 * it; `done` runs at the end, however it ends. Its `next` is no async function: a part costs the one promise the
 * `then` makes, not an async frame's and an await's on top.
 */
class Resumed<T> implements AsyncIterator<T>, AsyncIterable<T> {
  private pending: IteratorResult<T> | undefined;
  private finished = false;
  private readonly settle = (result: IteratorResult<T>): IteratorResult<T> => {
    if (result.done) {
      this.finish();
    }
    return result;
  };
  private readonly fail = (error: unknown): never => {
    this.finish();
    throw error;
  };

  constructor(
    private readonly iterator: AsyncIterator<T>,
    first: IteratorResult<T>,
    private readonly done: () => void,
  ) {
    this.pending = first;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    const result = this.pending;
    if (result) {
      this.pending = undefined;
      return Promise.resolve(this.settle(result));
    }
    try {
      return this.iterator.next().then(this.settle, this.fail);
    } catch (error) {
      this.finish();
      return Promise.reject(error);
    }
  }

  async return(value?: unknown): Promise<IteratorResult<T>> {
    this.finish();
    await this.iterator.return?.(value);
    return { done: true, value: undefined as T };
  }

  private finish(): void {
    if (!this.finished) {
      this.finished = true;
      this.done();
    }
  }
}

function chat(plan: ResiliencePlan<ChatModel>, runtime: ResilienceRuntime): ChatModel {
  const first = plan.deployments[0]!.model();
  const passthrough: Partial<Record<Dialect, NativePassthrough>> = {};
  for (const dialect of DIALECTS) {
    // Passthrough only when every deployment speaks the dialect; a fallback that does not is skipped for it.
    if (!plan.deployments.every((target) => target.model().passthrough?.[dialect])) {
      continue;
    }
    const usable = (target: Target<ChatModel>) => target.model().passthrough?.[dialect] !== undefined;
    // Made once per dialect, not per call: the options, and the method called by name (no `bind` per attempt).
    const runOptions = { usable };
    const forwardWith =
      (method: 'forward' | 'forwardCountTokens') =>
      async (body: Record<string, unknown>, context: PassthroughContext): Promise<PassthroughResponse> => {
        const committed = await runResilient(
          plan,
          runtime,
          context,
          async (target, signal) => {
            const native = target.model().passthrough![dialect]!;
            // Each deployment has its own name for the model (the body is copied only when it differs).
            const named = body.model === target.upstreamModel ? body : { ...body, model: target.upstreamModel };
            const response = await native[method]!(named, withSignal(context, signal));
            // Committed only at the first bytes: an answer that stalls or breaks before them is still retried.
            const iterator = response.body[Symbol.asyncIterator]();
            const head = await iterator.next();
            return { response, iterator, head };
          },
          runOptions,
        );
        const { response, iterator, head } = committed.value;
        return {
          status: response.status,
          headers: response.headers,
          body: new Resumed(iterator, head, committed.done),
        };
      };
    const native = first.passthrough![dialect]!;
    passthrough[dialect] = {
      forward: forwardWith('forward'),
      ...(native.forwardCountTokens ? { forwardCountTokens: forwardWith('forwardCountTokens') } : {}),
    };
  }
  return {
    provider: first.provider,
    modelId: first.modelId,
    ...(Object.keys(passthrough).length > 0 ? { passthrough } : {}),
    ...(first.writeFromSources ? { writeFromSources: first.writeFromSources.bind(first) } : {}),
    generate: (options: ChatCallOptions, context: CallContext) =>
      once(plan, runtime, context, (model, signal) => model.generate(options, withSignal(context, signal))),
    countTokens: (options: ChatCallOptions, context: CallContext) =>
      once(plan, runtime, context, (model, signal) => model.countTokens(options, withSignal(context, signal))),
    stream: (options: ChatCallOptions, context: CallContext): AsyncIterable<ChatStreamPart> =>
      streamOnce(plan, runtime, context, (model, attempt) => model.stream(options, attempt)),
  };
}

/** A video job's checkpoint belongs to the deployment that made the job: stored as `{ d, v }`, seen only there. */
function scopedCheckpoint(context: VideoTaskContext, deployment: string): VideoTaskContext['checkpoint'] {
  return {
    get() {
      const owner = checkpointOwner(context.checkpoint.get());
      return owner?.d === deployment ? owner.v : undefined;
    },
    set(value) {
      context.checkpoint.set(JSON.stringify({ d: deployment, v: value }));
    },
  };
}

function checkpointOwner(raw: string | undefined): { d: string; v: string } | undefined {
  if (raw === undefined) {
    return undefined;
  }
  try {
    const parsed = JSON.parse(raw) as { d?: unknown; v?: unknown };
    return typeof parsed.d === 'string' && typeof parsed.v === 'string' ? { d: parsed.d, v: parsed.v } : undefined;
  } catch {
    return undefined;
  }
}

function video(plan: ResiliencePlan<VideoModel>, runtime: ResilienceRuntime): VideoModel {
  const first = plan.deployments[0]!.model();
  return {
    provider: first.provider,
    modelId: first.modelId,
    ...(first.check ? { check: first.check.bind(first) } : {}),
    async generate(options, context) {
      // A task taken up again resumes on the deployment whose job its checkpoint names, if that one is up;
      // otherwise its attempt moves to another deployment and starts a job there.
      const prefer = checkpointOwner(context.checkpoint.get())?.d;
      const committed = await runResilient(
        plan,
        runtime,
        context,
        (target, signal) =>
          target.model().generate(options, {
            ...withSignal(context, signal),
            checkpoint: scopedCheckpoint(context, target.id),
          }),
        { prefer },
      );
      committed.done();
      return committed.value;
    },
  };
}

/**
 * The containers the audio is converted into before any attempt: those every deployment and fallback takes (one
 * taking any container restricts nothing), so whichever serves gets audio it accepts. When their lists share
 * none, the first restricted one's, as a model with one deployment would have it.
 */
export function commonAcceptedFormats(
  models: ReadonlyArray<Pick<TranscriptionModel, 'acceptedFormats'>>,
): readonly AudioContainer[] | undefined {
  const lists = models.flatMap((model) => (model.acceptedFormats ? [model.acceptedFormats] : []));
  if (lists.length === 0) {
    return undefined;
  }
  const common = lists[0]!.filter((format) => lists.every((list) => list.includes(format)));
  return common.length > 0 ? common : lists[0];
}

/** Speech to text: a stream is committed at its first part, like chat's. */
function transcription(plan: ResiliencePlan<TranscriptionModel>, runtime: ResilienceRuntime): TranscriptionModel {
  const first = plan.deployments[0]!.model();
  let accepted: { formats: readonly AudioContainer[] | undefined } | undefined;
  return {
    provider: first.provider,
    modelId: first.modelId,
    // Worked out on first use: the fallbacks name other models, resolved only then.
    get acceptedFormats() {
      accepted ??= {
        formats: commonAcceptedFormats([...plan.deployments, ...plan.fallbacks()].map((target) => target.model())),
      };
      return accepted.formats;
    },
    transcribe: (options, context) =>
      once(plan, runtime, context, (model, signal) => model.transcribe(options, withSignal(context, signal))),
    translate: (options, context) =>
      once(plan, runtime, context, (model, signal) => model.translate(options, withSignal(context, signal))),
    streamTranscription: (options, context): AsyncIterable<TranscriptionStreamPart> =>
      streamOnce(plan, runtime, context, (model, attempt) => model.streamTranscription(options, attempt)),
  };
}

/** The model of `type` whose calls go through `plan`. */
export function deployedModel<T extends ModelType>(
  type: T,
  plan: ResiliencePlan<ModelByType[T]>,
  runtime: ResilienceRuntime,
): ModelByType[T] {
  const first = () => plan.deployments[0]!.model();
  switch (type) {
    case 'chat':
    case 'vision':
      return chat(plan as ResiliencePlan<ChatModel>, runtime) as ModelByType[T];
    case 'video':
      return video(plan as ResiliencePlan<VideoModel>, runtime) as ModelByType[T];
    case 'image': {
      const p = plan as ResiliencePlan<ImageModel>;
      const model: ImageModel = {
        provider: first().provider,
        modelId: first().modelId,
        generate: (options, context) =>
          once(p, runtime, context, (m, signal) => m.generate(options, withSignal(context, signal))),
      };
      return model as ModelByType[T];
    }
    case 'speech': {
      const p = plan as ResiliencePlan<SpeechModel>;
      const model: SpeechModel = {
        provider: first().provider,
        modelId: first().modelId,
        synthesize: (options, context) =>
          once(p, runtime, context, (m, signal) => m.synthesize(options, withSignal(context, signal))),
      };
      return model as ModelByType[T];
    }
    case 'music': {
      const p = plan as ResiliencePlan<MusicModel>;
      const model: MusicModel = {
        provider: first().provider,
        modelId: first().modelId,
        compose: (options, context) =>
          once(p, runtime, context, (m, signal) => m.compose(options, withSignal(context, signal))),
      };
      return model as ModelByType[T];
    }
    case 'search': {
      const p = plan as ResiliencePlan<SearchModel>;
      const model: SearchModel = {
        provider: first().provider,
        modelId: first().modelId,
        search: (options, context) =>
          once(p, runtime, context, (m, signal) => m.search(options, withSignal(context, signal))),
      };
      return model as ModelByType[T];
    }
    case 'embedding': {
      const p = plan as ResiliencePlan<EmbeddingModel>;
      const model: EmbeddingModel = {
        provider: first().provider,
        modelId: first().modelId,
        embed: (options, context) =>
          once(p, runtime, context, (m, signal) => m.embed(options, withSignal(context, signal))),
      };
      return model as ModelByType[T];
    }
    case 'rerank': {
      const p = plan as ResiliencePlan<RerankModel>;
      const model: RerankModel = {
        provider: first().provider,
        modelId: first().modelId,
        rerank: (options, context) =>
          once(p, runtime, context, (m, signal) => m.rerank(options, withSignal(context, signal))),
      };
      return model as ModelByType[T];
    }
    case 'transcription':
      return transcription(plan as ResiliencePlan<TranscriptionModel>, runtime) as ModelByType[T];
    default:
      throw new Error(`no retry layer for models of type ${type satisfies never}`);
  }
}
