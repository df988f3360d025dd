import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HarnessConfig } from '../../src/core/harness';
import type { RemoteSettings } from '../../src/core/remote/settings';
import type { SessionEvent } from '../../src/core/session/events';
import { makeHarness, type TestHarness, until } from '../support/harness';
import { ModelServer } from '../support/model-server';
import { repoRoot } from '../support/repo-root';

// The remote tier (issue 13): the real programs from .tools/remote (scripts/remote/setup.mjs),
// each pointed at the loopback model server in the wire format it speaks.

export const REMOTE_DIR = path.join(repoRoot(), '.tools', 'remote');
export const CODEX_BIN = path.join(REMOTE_DIR, 'node_modules', '.bin', 'codex');
export const CLAUDE_BIN = path.join(REMOTE_DIR, 'node_modules', '.bin', 'claude');
/** Pinned in scripts/remote/paths.mjs; the tests check the installed programs report them. */
export const PINNED = { codex: '0.171.0', claude: '2.1.332' };

/**
 * A program's own state folder, outside the temp dir: codex refuses to set up its sandbox
 * helper (`codex-linux-sandbox`) under the temp dir, and every command then fails. Beside the
 * programs in .tools/remote, unless the checkout itself is under the temp dir (a CI clone in
 * /tmp): then /var/tmp, which is not.
 */
export function programHome(tag: string): string {
  const tmp = fs.realpathSync(os.tmpdir());
  const underTmp = (p: string) => p === tmp || p.startsWith(tmp + path.sep);
  const base = underTmp(fs.realpathSync(repoRoot())) ? path.join('/var/tmp', 'arbor-remote-homes') : path.join(REMOTE_DIR, 'homes');
  fs.mkdirSync(base, { recursive: true });
  return fs.mkdtempSync(path.join(base, `${tag}-`));
}

/** Settings for both real programs against `server`. */
export function remoteSettings(
  server: ModelServer,
  homes: { codex: string; claude: string },
  extra: Partial<Record<keyof RemoteSettings, object>> = {},
): RemoteSettings {
  return {
    codex: {
      command: CODEX_BIN,
      model: 'gpt-5.5',
      home: homes.codex,
      // HOME is the test's own: the machine's dotfiles (a ~/.bashrc running `pyenv init`, which
      // waits 60 s on a stale lock) must not run inside the program's shell commands.
      env: { MOCK_API_KEY: 'mock-key', HOME: homes.codex },
      overrides: [
        'model_provider="mock"',
        'model_providers.mock.name="mock"',
        `model_providers.mock.base_url="${server.baseURL}"`,
        'model_providers.mock.wire_api="responses"',
        'model_providers.mock.env_key="MOCK_API_KEY"',
        'model_providers.mock.request_max_retries=0',
        'model_providers.mock.stream_max_retries=0',
      ],
      graceMs: 1500,
      ...extra.codex,
    },
    claudeCode: {
      command: CLAUDE_BIN,
      model: 'claude-sonnet-4-5',
      home: homes.claude,
      env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${server.port}`, ANTHROPIC_API_KEY: 'dummy', CLAUDE_CODE_MAX_RETRIES: '0', HOME: homes.claude },
      graceMs: 1500,
      ...extra.claudeCode,
    },
  };
}

export interface RemoteWorld {
  readonly server: ModelServer;
  readonly t: TestHarness;
  homes: { codex: string; claude: string };
  /** A harness of this test's own (other settings); cleaned up after the test. */
  reopen(overrides: Partial<HarnessConfig>): Promise<TestHarness>;
}

export function remoteWorld(overrides: Partial<HarnessConfig> = {}): RemoteWorld {
  let server: ModelServer;
  let t: TestHarness;
  const extra: TestHarness[] = [];
  const homes = { codex: '', claude: '' };
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(async () => {
    server.reset();
    homes.codex = programHome('codex');
    homes.claude = programHome('claude');
    t = await makeHarness(server, { remote: remoteSettings(server, homes), ...overrides });
  });
  afterEach(async () => {
    for (const x of extra.splice(0)) await x.cleanup();
    await t.cleanup();
    fs.rmSync(homes.codex, { recursive: true, force: true });
    fs.rmSync(homes.claude, { recursive: true, force: true });
  });
  return {
    get server() {
      return server;
    },
    get t() {
      return t;
    },
    homes,
    async reopen(o) {
      const x = await makeHarness(server, { remote: remoteSettings(server, homes), ...o });
      extra.push(x);
      return x;
    },
  };
}

/** Whether any process still runs in group `pgid`: the one zombie-aware answer every user of a group gets. */
export { groupAlive } from '../../src/core/process/group';

export const ofType = <T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T) =>
  events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type);

/** The process group of the first `subagent/remote` event in `events()`, waited for up to 30 s. */
export async function pgidOf(events: () => readonly SessionEvent[]): Promise<number> {
  let pgid: number | undefined;
  await until(() => (pgid = ofType(events(), 'subagent/remote')[0]?.pgid) !== undefined, 30_000);
  return pgid!;
}

export function assertValidTurn(events: readonly SessionEvent[]): void {
  const starts = ofType(events, 'turn/start').length;
  assert.equal(ofType(events, 'turn/end').length, starts, 'every turn that started ended');
}

/** Route the server's script by wire: each wire's replies are served in order, then `ok`. */
export function byWire(server: ModelServer, queues: Partial<Record<'chat' | 'responses' | 'messages', import('../support/model-server').Reply[]>>): void {
  server.setFallback((_body, i) => {
    const q = queues[server.requests[i].wire as 'chat'];
    return q?.shift() ?? { text: 'ok' };
  });
}
