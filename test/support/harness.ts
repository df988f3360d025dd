import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AgentConfig } from '../../src/core/agent/config';
import { SessionWriter } from '../../src/core/agent/session-writer';
import { Harness, type HarnessConfig, newSessionId } from '../../src/core/harness';
import type { SessionHeader } from '../../src/core/session/events';
import { Session } from '../../src/core/session/session';
import { ModelServer } from './model-server';

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
  // A reopen passes the closed harness's folders: they are what this one reports too.
  const workspace = overrides.workspace?.[0] ?? path.join(dir, 'ws');
  const storeDir = overrides.storeDir ?? path.join(dir, 'store');
  fs.mkdirSync(workspace, { recursive: true });
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

/** What the tests of a `harnessPerTest` describe see: read through the getters, so each test gets its own. */
export interface HarnessPerTest {
  readonly server: ModelServer;
  /** This test's harness; a test may swap in one of its own (then that one is cleaned up after it). */
  t: TestHarness;
}

/**
 * Registers mocha hooks in the calling describe: one test model server for the suite and,
 * per test, the server reset and a fresh harness on it (`overrides` applied), cleaned up after.
 */
export function harnessPerTest(overrides: Partial<HarnessConfig> = {}): HarnessPerTest {
  let server: ModelServer;
  let t: TestHarness;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(async () => {
    server.reset();
    t = await makeHarness(server, overrides);
  });
  afterEach(() => t.cleanup());
  return {
    get server() {
      return server;
    },
    get t() {
      return t;
    },
    set t(next: TestHarness) {
      t = next;
    },
  };
}

/** Poll `pred` every 5 ms until it holds; fail after `ms`. */
export async function until(pred: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * An agent's config over a new published root session of `h`, from the harness's public
 * parts (store, model, tools, defaults): for specs of the agent's own hooks, which build an
 * `Agent` themselves with `extra` added.
 */
export async function agentConfigOf(h: Harness, extra: Partial<AgentConfig> = {}): Promise<AgentConfig> {
  const root = fs.realpathSync(h.config.workspace[0]);
  const header: SessionHeader = { id: newSessionId(), createdAt: new Date().toISOString(), origin: 'user', delegationDepth: 0, cwd: root };
  const writer = new SessionWriter(Session.create(header), h.store, { published: false });
  await writer.publish();
  return {
    writer,
    model: h.model,
    modelName: h.config.model.name,
    tools: () => h.tools.view({}),
    system: () => 'You are a test agent.',
    roots: [root],
    defaults: h.config,
    ...extra,
  };
}
