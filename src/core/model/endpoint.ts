/** Where requests go when nobody says otherwise, and which model answers them (CLI and extension alike). */
export const DEFAULT_BASE_URL = 'https://api.deepseek.com';
export const DEFAULT_MODEL = 'deepseek-chat';

/** A server on this machine: it needs no API key (the CLI and the extension send 'local'). */
export const isLocalUrl = (u: string): boolean => /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:|\/|$)/.test(u);

/** The API key from the environment: ARBOR_API_KEY, else DEEPSEEK_API_KEY, else OPENAI_API_KEY. */
export function envApiKey(env: NodeJS.ProcessEnv): string | undefined {
  return env.ARBOR_API_KEY || env.DEEPSEEK_API_KEY || env.OPENAI_API_KEY || undefined;
}
