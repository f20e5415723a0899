/** What providers log through: warnings about an upstream's answer (pino's `warn` fits it). */
export interface ProviderLogger {
  warn(object: Record<string, unknown>, message: string): void;
}
