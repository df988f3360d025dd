export { CAP_FIELD_SETTINGS, type CapField, type CapFieldSetting, capFieldFor } from './cap-field';
export { classifyError } from './errors';
export { normalizeUsage, type OpenAIClientOptions, OpenAICompatibleClient } from './openai-client';
export { type BuiltRequest, buildRequest, canonical, MAX_CAP_FIELD_BYTES } from './request';
export { ModelSwitch } from './switch';
export * from './types';
