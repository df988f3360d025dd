export * from './types';
export { OpenAICompatibleClient, normalizeUsage, type OpenAIClientOptions } from './openai-client';
export { buildRequest, canonical, type BuiltRequest } from './request';
export { classifyError } from './errors';
export { ModelSwitch } from './switch';
