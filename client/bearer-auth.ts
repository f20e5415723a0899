/** The bearer-token middleware of both clients (an API key, or the admin key). */
import type { Middleware } from 'openapi-fetch';

/** Sets `Authorization: Bearer <token>` on every request. */
export function bearerAuth(token: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  };
}
