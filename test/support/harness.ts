import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Harness, type HarnessConfig } from '../../src/core/harness';
import type { ModelServer } from './model-server';

export interface TestHarness {
  h: Harness;
  dir: string;
  workspace: string;
  storeDir: string;
  cleanup(): Promise<void>;
}

/** A harness on real temp folders (store + workspace) talking to the test model server. */
export async function makeHarness(server: ModelServer, overrides: Partial<HarnessConfig> = {}): Promise<TestHarness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-h-'));
  const workspace = path.join(dir, 'ws');
  const storeDir = path.join(dir, 'store');
  fs.mkdirSync(workspace);
  const h = await Harness.open({
    storeDir,
    workspace: [workspace],
    model: { baseURL: server.baseURL, name: 'test-model', apiKey: 'test', maxRetries: 0, timeoutMs: 10_000 },
    sandbox: 'workspace-write',
    approval: 'never',
    ...overrides,
  });
  return {
    h,
    dir,
    workspace,
    storeDir,
    cleanup: async () => {
      await h.close().catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
