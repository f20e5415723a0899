/**
 * Every call the console makes goes through here: same origin, the signed-in key in the Authorization header
 * (never in the URL), errors turned into the message of the API's error envelope plus the request id.
 */
import { adminKey, apiKey } from './session.ts';

export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly requestId: string | null,
  ) {
    super(message);
  }
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  admin?: boolean;
}

export function authorization(admin = false): Record<string, string> {
  const key = admin ? adminKey.get() : apiKey.get();
  return key ? { authorization: `Bearer ${key}` } : {};
}

export function requestIdOf(response: Response): string | null {
  return response.headers.get('x-svc-request-id') ?? response.headers.get('x-request-id');
}

/** The raw response of a successful call; a non-2xx answer throws ApiFailure with the envelope's message. */
export async function call(path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...authorization(options.admin), ...options.headers };
  let body: BodyInit | undefined;
  if (options.body instanceof FormData) {
    body = options.body;
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(path, {
    method: options.method ?? (body ? 'POST' : 'GET'),
    headers,
    body,
    signal: options.signal,
  });
  if (!response.ok) {
    throw await failureOf(response);
  }
  return response;
}

export async function failureOf(response: Response): Promise<ApiFailure> {
  let message = `${response.status} ${response.statusText}`;
  try {
    const text = await response.text();
    const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    const error = parsed.error;
    message = (typeof error === 'object' ? error?.message : error) ?? parsed.message ?? message;
  } catch {
    // Not JSON: the status line says enough.
  }
  return new ApiFailure(message, response.status, requestIdOf(response));
}

export async function callJson<T>(path: string, options: CallOptions = {}): Promise<T> {
  return (await (await call(path, options)).json()) as T;
}

/** Bytes answered with the key (audio, video, a file's content) as an object URL for a media element. */
export async function callBlobUrl(path: string, options: CallOptions = {}): Promise<string> {
  const response = await call(path, options);
  return URL.createObjectURL(await response.blob());
}

export function describe(error: unknown): string {
  if (error instanceof ApiFailure) {
    return error.requestId ? `${error.message} (request ${error.requestId})` : error.message;
  }
  if (error instanceof DOMException && error.name === 'AbortError') {
    return 'Stopped.';
  }
  return error instanceof Error ? error.message : String(error);
}

export interface ModelInfo {
  id: string;
  type: string;
  provider: string;
  aliases?: string[];
}

let models: Promise<ModelInfo[]> | undefined;
/** The models of `GET /v1/models`, fetched once per sign-in. */
export function listModels(): Promise<ModelInfo[]> {
  models ??= callJson<{ data: ModelInfo[] }>('/v1/models').then(
    (list) => list.data,
    (error) => {
      models = undefined;
      throw error;
    },
  );
  return models;
}

export function forgetModels(): void {
  models = undefined;
}
