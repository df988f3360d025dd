// The model the settings and the key ask for (decision 0016), read fresh each time: a key
// (SecretStorage, then the environment) or a local endpoint is used as configured; without
// either, the demo model `npm start` serves, else a client whose every turn says how to set a key.
import type * as vscode from 'vscode';
import type { ModelConfig } from '../core/harness';
import { envApiKey } from '../core/model/endpoint';
import type { ModelClient, ModelRequest, ModelStreamEvent } from '../core/model/types';
import type { ModelSource } from '../protocol';
import { isLocalUrl, readSettings } from './settings';

export const SECRET_KEY = 'arbor.apiKey';
/** Set by `npm start` when it serves the bundled demo model: used while no key is configured. */
export const DEMO_URL_ENV = 'ARBOR_DEMO_BASE_URL';

/** Stands in for the model when no key is set: every turn ends with a message saying how to set one. */
class MissingKeyClient implements ModelClient {
  readonly provider = 'none';
  constructor(private readonly baseUrl: string) {}
  describe(req: ModelRequest) {
    return { provider: this.provider, model: req.model, bytes: 0, headBytes: 0, headHash: 'none', prefixHash: 'none' };
  }
  async *stream(): AsyncIterable<ModelStreamEvent> {
    yield {
      type: 'error',
      error: {
        code: 'auth',
        midStream: false,
        message: `No API key for ${this.baseUrl}. Run "Arbor: Set API Key" (or set ARBOR_API_KEY / DEEPSEEK_API_KEY / OPENAI_API_KEY), then send again.`,
      },
    };
  }
}

/** The model to use now and where it comes from (the panel says which). */
export async function readModelConfig(secrets: vscode.SecretStorage): Promise<{ model: ModelConfig; source: ModelSource }> {
  const s = readSettings();
  const key = (await secrets.get(SECRET_KEY)) || envApiKey(process.env) || '';
  const demo = process.env[DEMO_URL_ENV];
  const max = s.maxTokens ? { maxTokens: s.maxTokens } : {};
  const timeoutMs = s.timeoutMs;
  if (key !== '' || isLocalUrl(s.baseUrl)) {
    return { source: 'endpoint', model: { baseURL: s.baseUrl, name: s.model, apiKey: key || 'local', timeoutMs, capField: s.capField, ...max } };
  }
  if (demo) {
    return { source: 'demo', model: { baseURL: demo, name: 'arbor-demo', apiKey: 'demo', timeoutMs, capField: s.capField, ...max } };
  }
  return { source: 'none', model: { client: new MissingKeyClient(s.baseUrl), name: s.model, ...max } };
}
