// The environment a command runs with: the host's, minus the model's API key. A command is
// code the model chose; if the key were in its environment, `env | curl …` (or a test that
// prints its environment into a file the model reads) would hand it out.

/** Variables the model configuration reads its key from (the CLI, the extension's fallbacks). */
export const KEY_VARIABLES: readonly string[] = ['ARBOR_API_KEY', 'DEEPSEEK_API_KEY', 'OPENAI_API_KEY'];

/** Shorter values are not treated as secrets ('local', 'demo': placeholders for keyless endpoints). */
const MIN_SECRET_LENGTH = 8;

/**
 * `base` without the key variables and without any variable whose value contains one of
 * `secrets` (the key in use, wherever it came from), plus `extra`.
 */
export function commandEnv(base: NodeJS.ProcessEnv, secrets: readonly string[], extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const hidden = secrets.filter((s) => s.length >= MIN_SECRET_LENGTH);
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (KEY_VARIABLES.includes(name.toUpperCase())) continue;
    if (hidden.some((s) => value.includes(s))) continue;
    env[name] = value;
  }
  return { ...env, ...extra };
}
