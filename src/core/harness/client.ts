import { OpenAICompatibleClient } from '../model/openai-client';
import type { ModelClient } from '../model/types';
import type { ModelConfig } from './config';

/** The model client a config names: its own client (tests, the demo), or the OpenAI-compatible one for an endpoint. */
export function clientFor(model: ModelConfig): ModelClient {
  return 'client' in model
    ? model.client
    : new OpenAICompatibleClient({
        baseURL: model.baseURL,
        apiKey: model.apiKey,
        timeoutMs: model.timeoutMs,
        maxRetries: model.maxRetries,
        ...(model.capField ? { capField: model.capField } : {}),
      });
}
