export { classifyError } from './errors';
export { normalizeUsage, type OpenAIClientOptions, OpenAICompatibleClient } from './openai-client';
export { type BuiltRequest, buildRequest, canonical } from './request';
export { ModelSwitch } from './switch';
export * from './types';
