/**
 * Which body field carries a request's completion cap. Chat-completions endpoints take
 * `max_tokens`; OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 …) refuse it and want
 * `max_completion_tokens` (which also counts their hidden reasoning). `auto` decides by the
 * model's name; a deployment whose endpoint wants the other field says so (setting
 * `arbor.model.completionCapField`, decision 0043).
 */
export type CapField = 'max_tokens' | 'max_completion_tokens';
export type CapFieldSetting = 'auto' | CapField;

export const CAP_FIELD_SETTINGS: readonly CapFieldSetting[] = ['auto', 'max_tokens', 'max_completion_tokens'];

/** OpenAI reasoning-model families, after an optional routing prefix (`openai/o3-mini`). */
const REASONING_MODEL = /^(?:[\w.-]+\/)*(?:o1|o3|o4|gpt-5)(?:$|[-.:_])/i;

export function capFieldFor(model: string, setting: CapFieldSetting = 'auto'): CapField {
  if (setting !== 'auto') return setting;
  return REASONING_MODEL.test(model) ? 'max_completion_tokens' : 'max_tokens';
}
