/**
 * What `omnigate start` prints once it listens, for the person at the terminal (the JSON log lines are for
 * machines): where it serves, where the docs are, where the data lives, one call to try — and, on the very
 * first start only, the generated key, which is stored hashed and can never be shown again.
 */
export interface WelcomeFacts {
  url: string;
  dataDir: string;
  version: string;
  /** The key created at this start, if none existed. */
  generatedKey?: string;
}

export const GENERATED_KEY_NOTICE = 'No API key existed, so one was created. Keep it; it is not shown again:';

export function welcomeMessage(facts: WelcomeFacts): string {
  const key = facts.generatedKey ?? '$OMNIGATE_API_KEY';
  const lines = [
    '',
    `Omnigate ${facts.version} is serving ${facts.url}`,
    `  API reference  ${facts.url}/docs`,
    `  Data           ${facts.dataDir} (keys, usage records, stored responses)`,
  ];
  if (facts.generatedKey) {
    lines.push('', GENERATED_KEY_NOTICE, '', `  ${facts.generatedKey}`);
  }
  lines.push(
    '',
    'Try it:',
    '',
    `  curl -s ${facts.url}/v1/chat/completions -H "Authorization: Bearer ${key}" \\`,
    `    -H 'content-type: application/json' -d '{"model":"local:chat","messages":[{"role":"user","content":"Hello"}]}'`,
    '',
  );
  return `${lines.join('\n')}\n`;
}
