import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SANDBOX_MODES } from '../policy/sandbox';
import { programEnv, resolveCommand } from './process';
import { type Json, type LineHandlers, num, record, runProgram, type StreamState, str } from './run';
import { type ProgramSettings, stopTiming } from './settings';
import type { RemoteDriver, RemoteSink } from './types';

/** What a program's driver needs from the parent deployment: its store folder, its model endpoint, its network setting. */
export interface ParentDeployment {
  storeDir: string;
  /** The parent's model endpoint (absent base URL: an injected client, e.g. in tests). */
  endpoint(): { baseURL?: string; name: string; apiKey?: string };
  /** Whether the parent's confined commands may use the IP network (`--network`), read at each turn; absent: no. */
  network?(): boolean;
}

const SETTING = 'arbor.remote.dshSdk.command';

/**
 * `dsh-sdk`: another Arbor as a one-shot remote child (decision 0039): `arbor run --json` on a
 * store of its own (`<parent store>/remote/<childId>`, or `<home>/<childId>`), the child's
 * sandbox enforced by the child Arbor itself (`--sandbox`, `--approval never`). Its root
 * session's events are copied through the shared sink with its tool names tagged `arbor:`;
 * its own children stay in its store, readable with `arbor log --store`.
 *
 * The Arbor API key: this is Arbor's own program, so it may get the key, but only for the
 * endpoint the key belongs to. When the child's base URL is the parent's, `ARBOR_API_KEY`
 * is set to the parent's key; for any other base URL no key of Arbor's is passed (a local
 * server needs none; another one takes its key from `env`, e.g. `OPENAI_API_KEY`).
 */
export function dshDriver(settings: ProgramSettings, secrets: () => readonly string[], parent: ParentDeployment): RemoteDriver {
  return {
    program: 'dsh-sdk',
    toolPrefix: 'arbor',
    // Another Arbor: an OpenAI-compatible client on its setting's endpoint, else the parent's (model included).
    modelProvider: 'openai-compatible',
    model: () => settings.model ?? parent.endpoint().name,
    ...(settings.turnTimeoutMs ? { turnTimeoutMs: settings.turnTimeoutMs } : {}),
    supports: (mode) => SANDBOX_MODES.includes(mode),
    async runTurn(ctx, sink) {
      const launch = launcher(settings.command, settings.env?.PATH);
      if (!launch)
        return {
          stopReason: 'error',
          error: `REMOTE_NOT_FOUND: Arbor (dsh-sdk) was not found: "${settings.command}" is not an executable file, a command on PATH or a .js file. Set ${SETTING} to the path of arbor (bin/arbor.js).`,
        };
      const ep = parent.endpoint();
      const baseURL = settings.baseUrl ?? ep.baseURL;
      if (!baseURL) return { stopReason: 'error', error: 'DSH_NO_BASE_URL: the parent has no model base URL to share; set arbor.remote.dshSdk.baseUrl.' };
      const model = settings.model ?? ep.name;
      const store = path.join(settings.home ?? path.join(parent.storeDir, 'remote'), ctx.childId);
      fs.mkdirSync(store, { recursive: true });
      const version = await arborVersion(launch);
      const args = [
        ...launch.pre,
        'run',
        '--json',
        '--store',
        store,
        '--workspace',
        ctx.cwd,
        '--sandbox',
        ctx.sandbox,
        // Nobody can answer the child Arbor's questions: it refuses what its sandbox does not allow.
        '--approval',
        'never',
        '--base-url',
        baseURL,
        '--model',
        model,
        '--',
        ctx.prompt,
      ];
      const env = dshEnv(settings, ep, baseURL, secrets());
      if (launch.electron) env.ELECTRON_RUN_AS_NODE = '1';
      return runProgram(ctx, sink, {
        label: 'Arbor (dsh-sdk)',
        setting: SETTING,
        spec: {
          command: launch.exe,
          args,
          cwd: ctx.cwd,
          env,
          ...stopTiming(settings),
        },
        handlers: handlers(version, store),
        typeOf: () => 'line',
      });
    },
  };
}

/**
 * The child Arbor's environment: the allow-list and its `env` setting (never an `ARBOR_*` name
 * or a value equal to Arbor's key), then — Arbor's own program — `ARBOR_API_KEY` with the
 * parent's key only when the child talks to the parent's own endpoint, and the parent's
 * `ARBOR_BWRAP` (not a secret: where bubblewrap is).
 */
export function dshEnv(
  settings: Pick<ProgramSettings, 'env'>,
  ep: { baseURL?: string; apiKey?: string },
  baseURL: string,
  secrets: readonly string[],
  host: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env = programEnv(settings.env, host, secrets);
  if (ep.apiKey && ep.baseURL && sameEndpoint(baseURL, ep.baseURL)) env.ARBOR_API_KEY = ep.apiKey;
  if (host.ARBOR_BWRAP) env.ARBOR_BWRAP = host.ARBOR_BWRAP;
  return env;
}

interface Launch {
  exe: string;
  pre: string[];
  electron: boolean;
}

/** A `.js` launcher runs under this Node (or VS Code's, as Node); anything else is an executable. */
function launcher(command: string, pathVar = process.env.PATH ?? ''): Launch | undefined {
  if (command.endsWith('.js')) {
    const script = path.resolve(command);
    if (!fs.existsSync(script) || !fs.statSync(script).isFile()) return undefined;
    return { exe: process.execPath, pre: [script], electron: Boolean(process.versions.electron) };
  }
  // A name is looked up outside the folders a confined command could write (`host-program.ts`): its
  // `--version` runs before the turn, unconfined, and a name left to execFile would take PATH's first.
  const exe = resolveCommand(command, pathVar);
  return exe ? { exe, pre: [], electron: false } : undefined;
}

const versions = new Map<string, Promise<string | undefined>>();

/** `arbor --version` (the package version), once per launcher. */
function arborVersion(l: Launch): Promise<string | undefined> {
  const key = [l.exe, ...l.pre].join(' ');
  let v = versions.get(key);
  if (!v) {
    v = new Promise((resolve) =>
      execFile(
        l.exe,
        [...l.pre, '--version'],
        { encoding: 'utf8', timeout: 30_000, env: { ...programEnv(), ...(l.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {}) } },
        (err, stdout) => resolve(err ? undefined : stdout.trim().split('\n')[0] || undefined),
      ),
    );
    versions.set(key, v);
  }
  return v;
}

function sameEndpoint(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/** Stop reasons the child Arbor's turn/end may carry, kept as they are. */
const STOPS = new Set(['completed', 'max-tokens', 'error', 'interrupted', 'cancelled', 'budget']);

/**
 * Each line is `{session, ...SessionEvent}`. The first line names the remote root; only its
 * events are copied (the remote tree stays in its own store), the frame (`inbox/*`,
 * `turn/start`, its prompt, policy) is ours already and is dropped and counted.
 */
function handlers(version: string | undefined, store: string): LineHandlers {
  let root: string | undefined;
  const total = { promptTokens: 0, completionTokens: 0, cacheHitTokens: 0 };
  const own: Record<string, (e: Json, st: StreamState, sink: RemoteSink) => void | Promise<void>> = {
    'assistant/message': async (e, _st, sink) => {
      if (str(e.model)) sink.model(str(e.model));
      if (str(e.reasoning)) {
        sink.delta('reasoning', str(e.reasoning));
        sink.reasoning(str(e.reasoning));
      }
      if (str(e.text)) {
        sink.delta('text', str(e.text));
        sink.text(str(e.text));
      }
      for (const c of Array.isArray(e.toolCalls) ? e.toolCalls : []) {
        if (!record(c)) continue;
        await sink.toolCall(str(c.id), str(c.name), str(c.arguments) || '{}');
      }
    },
    'tool/result': (e, _st, sink) => sink.toolResult(str(e.callId), str(e.content), e.isError === true),
    'turn/end': (e, st) => {
      const stop = str(e.stopReason);
      const reason = STOPS.has(stop) ? (stop as 'completed') : 'error';
      st.final =
        reason === 'completed'
          ? { stopReason: 'completed' }
          : { stopReason: reason, error: `Arbor (dsh-sdk) ended ${stop}${str(e.error) ? `: ${str(e.error)}` : '.'}` };
    },
  };
  return {
    line: async (e, st, sink) => {
      const session = str(e.session);
      const type = str(e.type);
      if (!root && session) {
        root = session;
        await sink.external({ program: 'dsh-sdk', ...(version ? { version } : {}), externalId: root, ...st.proc.identity, store });
      }
      // Usage of the whole remote tree: what the delegation cost, its children (and compactions) included.
      if ((type === 'assistant/message' || type === 'compaction/end') && record(e.usage)) {
        total.promptTokens += num(e.usage.promptTokens);
        total.completionTokens += num(e.usage.completionTokens);
        total.cacheHitTokens += num(e.usage.cacheHitTokens);
        sink.usage({ ...total });
      }
      if (session !== root) return sink.skipped('remote-child');
      const h = Object.hasOwn(own, type) ? own[type] : undefined;
      if (h) await h(e, st, sink);
      else sink.skipped(`remote:${type || 'untyped'}`);
    },
  };
}
