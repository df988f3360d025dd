import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HarnessConfig } from '../../../src/core/harness';
import type { HookRunEvent, SessionEvent, ToolResultEvent } from '../../../src/core/session/events';
import { makeHarness, type TestHarness } from '../../support/harness';
import { ModelServer } from '../../support/model-server';

// Real hook scripts for the hook specs: one small node program whose behaviour is its first
// argument, which appends the JSON input it read on stdin to a log file (one line per run).

const SCRIPT = `
import * as fs from 'node:fs';
import { spawn } from 'node:child_process';
const [mode, log, extra] = process.argv.slice(2);
let raw = '';
process.stdin.on('data', (d) => (raw += d));
process.stdin.on('end', () => {
  const input = JSON.parse(raw);
  fs.appendFileSync(log, JSON.stringify(input) + '\\n');
  const modes = {
    ok: () => process.exit(0),
    block: () => { process.stderr.write(extra ?? 'blocked by the test hook'); process.exit(2); },
    'block-once': () => { if (input.stop_hook_active) process.exit(0); process.stderr.write(extra); process.exit(2); },
    'json-block': () => { process.stdout.write(JSON.stringify({ decision: 'block', reason: extra })); process.exit(0); },
    allow: () => { process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'the hook trusts it' } })); process.exit(0); },
    ask: () => { process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'check this one' } })); process.exit(0); },
    context: () => { process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: extra } })); process.exit(0); },
    rmrf: () => { if (String(input.tool_input?.command ?? '').includes('rm -rf')) { process.stderr.write('rm -rf is not allowed in this workspace'); process.exit(2); } process.exit(0); },
    env: () => { process.stderr.write(JSON.stringify({ key: process.env.ARBOR_API_KEY ?? null, project: process.env.CLAUDE_PROJECT_DIR })); process.exit(2); },
    'env-has': () => { const hit = Object.entries(process.env).filter(([, v]) => String(v).includes(extra)).map(([k]) => k); process.stderr.write(JSON.stringify(hit)); process.exit(2); },
    fail: () => { process.stderr.write('the hook broke'); process.exit(3); },
    big: () => { process.stderr.write('x'.repeat(1024 * 1024)); process.exit(2); },
    hang: () => {
      // A grandchild in the same process group, then wait forever: the timeout must end both.
      const c = spawn('sleep', ['30'], { stdio: 'ignore' });
      fs.writeFileSync(extra, String(c.pid));
      setInterval(() => undefined, 1000);
    },
  };
  modes[mode]();
});
`;

export interface HookWorld extends TestHarness {
  /** The folder of the scripts and logs (removed by cleanup). */
  tmp: string;
  /** The JSON inputs the hooks logged to `log` so far. */
  inputs(log: string): Record<string, unknown>[];
  hookRuns(events: readonly SessionEvent[]): HookRunEvent[];
}

export function hookCommand(tmp: string, mode: string, log: string, extra?: string): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return [q(process.execPath), q(path.join(tmp, 'hook.mjs')), q(mode), q(path.join(tmp, log)), ...(extra !== undefined ? [q(extra)] : [])].join(' ');
}

type Settings = { hooks: Record<string, { matcher?: string; hooks: { type: 'command'; command: string; timeout?: number }[] }[]> };

/**
 * A harness whose workspace has `.arbor/settings.json` = `workspace(tmp)` and whose user file is
 * `user(tmp)`; `trusted` says whether the workspace is.
 */
export async function hookWorld(
  server: ModelServer,
  opts: {
    workspace?: (tmp: string) => Settings;
    user?: (tmp: string) => Settings;
    trusted?: boolean;
    claude?: (tmp: string) => Settings;
    readClaude?: boolean;
  },
  overrides: Partial<HarnessConfig> = {},
): Promise<HookWorld> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-hooks-'));
  fs.writeFileSync(path.join(tmp, 'hook.mjs'), SCRIPT);
  const ws = path.join(tmp, 'ws');
  fs.mkdirSync(path.join(ws, '.arbor'), { recursive: true });
  if (opts.workspace) fs.writeFileSync(path.join(ws, '.arbor', 'settings.json'), JSON.stringify(opts.workspace(tmp)));
  if (opts.claude) {
    fs.mkdirSync(path.join(ws, '.claude'));
    fs.writeFileSync(path.join(ws, '.claude', 'settings.json'), JSON.stringify(opts.claude(tmp)));
  }
  const userFile = path.join(tmp, 'user-settings.json');
  if (opts.user) fs.writeFileSync(userFile, JSON.stringify(opts.user(tmp)));
  const trusted = opts.trusted ?? true;
  const t = await makeHarness(server, {
    workspace: [ws],
    hooks: { workspaceRoot: fs.realpathSync(ws), userFile, readClaudeSettings: opts.readClaude ?? false, trusted: () => trusted },
    ...overrides,
  });
  return {
    ...t,
    tmp,
    inputs: (log) => {
      const f = path.join(tmp, log);
      if (!fs.existsSync(f)) return [];
      // A hook may be appending while a test polls: only whole lines (ended by their newline) count.
      const text = fs.readFileSync(f, 'utf8');
      return text
        .slice(0, text.lastIndexOf('\n') + 1)
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l));
    },
    hookRuns: (events) => events.filter((e): e is HookRunEvent => e.type === 'hook/run'),
    cleanup: async () => {
      await t.cleanup();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** A describe's model server (started once, reset before each spec) and the hook world a spec puts in `w`, cleaned up after it. */
export interface HookSpecs {
  readonly server: ModelServer;
  w: HookWorld | undefined;
}

/** Registers the hooks of `HookSpecs` in the calling describe. */
export function hookSpecs(): HookSpecs {
  let server: ModelServer | undefined;
  const specs: HookSpecs = {
    get server() {
      if (!server) throw new Error('the model server starts in before(): use it in a spec or a hook');
      return server;
    },
    w: undefined,
  };
  before(async () => (server = await ModelServer.start()));
  after(() => server?.stop());
  beforeEach(() => specs.server.reset());
  afterEach(async () => {
    await specs.w?.cleanup();
    specs.w = undefined;
  });
  return specs;
}

/** The `tool/result` events among `events`. */
export const toolResults = (events: readonly { type: string }[]) => events.filter((e): e is ToolResultEvent => e.type === 'tool/result');

/** `{hooks: {[event]: [{matcher, hooks: [{type: 'command', command, timeout}]}]}}` for one event. */
export function one(event: string, matcher: string, command: string, timeout?: number): Settings {
  return { hooks: { [event]: [{ matcher, hooks: [{ type: 'command', command, ...(timeout !== undefined ? { timeout } : {}) }] }] } };
}
