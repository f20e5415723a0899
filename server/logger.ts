/**
 * The structured logger (pino). Secrets never reach it: request headers are not logged, and the redact
 * list covers the places a key could appear if a caller logs an object with headers.
 */
import { pino, type Logger } from 'pino';

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['headers.authorization', 'headers["x-api-key"]', 'req.headers.authorization', 'req.headers["x-api-key"]', 'apiKey', 'api_key'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
