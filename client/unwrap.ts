/** Turns an openapi-fetch result into its body, or throws `OmnigateError` for a non-2xx or empty answer. */
import { OmnigateError, REQUEST_ID_HEADER } from './omnigate-error.js';

export interface FetchResult<Data> {
  data?: Data;
  error?: unknown;
  response: Response;
}

export function unwrap<Data>(result: FetchResult<Data>): Data {
  const { response } = result;
  if (!response.ok) {
    throw OmnigateError.fromResponse(response, result.error);
  }
  if (result.data === undefined || result.data === null) {
    throw new OmnigateError({
      status: response.status,
      type: 'invalid_response',
      code: null,
      param: null,
      message: `HTTP ${response.status} arrived without the expected body.`,
      requestId: response.headers.get(REQUEST_ID_HEADER),
    });
  }
  return result.data;
}
