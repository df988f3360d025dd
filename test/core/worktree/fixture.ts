import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HarnessConfig } from '../../../src/core/harness';
import type { SessionEvent, WorktreeEvent } from '../../../src/core/session/events';
import { DEFAULT_BWRAP } from '../../../src/core/tools/sandbox/detect';
import { createWorktree, type WorktreePlace } from '../../../src/core/worktree/checkout';
import type { RepoStateCache } from '../../../src/core/worktree/repo-state';
import { ModelServer } from '../../support/model-server';
import { eventsOf, ofType, subagentWorld, type WorldParts, withWorldParts } from '../subagent/helpers';

// A real git repository as the workspace, with the store where the CLI keeps it
// (`<ws>/.arbor/store`, so worktrees land in `<ws>/.arbor/worktrees`), outside /tmp so a
// confined command sees the parent's checkout (read-only) rather than its own empty /tmp.

export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
  });
}

/** Make `ws` a repository with one commit holding `a.txt` ("one"). */
export function initRepo(ws: string): string {
  gitIn(ws, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(ws, 'a.txt'), 'one\n');
  gitIn(ws, 'add', '-A');
  gitIn(ws, 'commit', '-qm', 'first');
  return ws;
}

/** A repository with `a.txt` committed, then changed (uncommitted) and an untracked `new.txt`. */
export function makeRepo(base: string): string {
  const ws = path.join(base, 'ws');
  fs.mkdirSync(ws, { recursive: true });
  gitIn(ws, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(ws, 'a.txt'), 'one\n');
  fs.writeFileSync(path.join(ws, 'keep.txt'), 'k1\nk2\nk3\nk4\nk5\n');
  gitIn(ws, 'add', '-A');
  gitIn(ws, 'commit', '-qm', 'first');
  fs.writeFileSync(path.join(ws, 'a.txt'), 'one\ntwo\n');
  fs.writeFileSync(path.join(ws, 'new.txt'), 'fresh\n');
  return fs.realpathSync(ws);
}

/** A worktree spec's world: the parts of its subagent world, its repository and the folder holding it. */
export interface WorktreeWorld extends WorldParts {
  readonly ws: string;
  readonly base: string;
}

/** Per test: a repository, a harness on it (store in `<ws>/.arbor/store`), a scripted model and a root session. */
export function worktreeWorld(overrides: Partial<HarnessConfig> = {}): WorktreeWorld {
  const world = subagentWorld({}, { gates: false, perTest: true });
  let ws: string;
  let base: string;
  beforeEach(async () => {
    base = fs.realpathSync(fs.mkdtempSync('/var/tmp/arbor-wt-test-'));
    ws = makeRepo(base);
    await world.setup({ workspace: [ws], storeDir: path.join(ws, '.arbor', 'store'), ...overrides });
  });
  // Registered after the world's own afterEach (mocha runs them in order): the harness is closed first.
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));
  return withWorldParts(world, {
    get ws() {
      return ws;
    },
    get base() {
      return base;
    },
  });
}

/** A worktree child (`spawn`, isolation worktree) of `w`'s root that ran `command`, its run over and disposed: its id. */
export async function childThatRan(w: WorktreeWorld, command: string): Promise<string> {
  w.script.on('c', { toolCalls: [{ name: 'run_command', arguments: { command } }] }, { text: 'done' });
  const r = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] work', label: 'kinds', isolation: 'worktree' });
  await r.result;
  await r.dispose();
  return r.id;
}

/** `test/support/crash-apply-host.ts` applying `childId`'s worktree in `ws`, killed -9 at `victim`: its signal and what it printed. */
export function crashApplyHost(
  world: CrashWorld,
  storeDir: string,
  ws: string,
  childId: string,
  victim: string,
): Promise<{ signal: string | null; out: string }> {
  const host = spawn(
    process.execPath,
    [path.join(__dirname, '..', '..', 'support', 'crash-apply-host.js'), storeDir, ws, world.server.baseURL, childId, victim],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  host.stdout.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((resolve) => host.once('exit', (_code, signal) => resolve({ signal, out })));
}

/** The child's own worktree event (its first). */
export async function placeOf(w: WorktreeWorld, id: string): Promise<WorktreeEvent> {
  const e = ofType(await eventsOf(w.t.h, id), 'worktree')[0];
  if (!e) throw new Error(`${id} has no worktree event`);
  return e;
}

/** The tool results of a session, in order. */
export async function results(w: WorktreeWorld, id: string): Promise<Extract<SessionEvent, { type: 'tool/result' }>[]> {
  return ofType(await eventsOf(w.t.h, id), 'tool/result');
}

/** A spec's folders: `dir` (removed after it), the empty workspace `ws` in it, and `wts` beside it for worktrees. */
export interface RepoFolders {
  dir: string;
  ws: string;
  wts: string;
}

/** Before each spec, fresh `RepoFolders` in a real folder under /var/tmp named `prefix…`, handed to `take`; removed after it. */
export function repoFoldersPerTest(prefix: string, take: (f: RepoFolders) => void): void {
  let dir = '';
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', prefix)));
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    take({ dir, ws, wts: path.join(dir, 'worktrees') });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
}

/** A crash spec file's world: one model server for the file, and before each spec a fresh real folder under /var/tmp named `prefix…` (removed after it). */
export interface CrashWorld {
  server: ModelServer;
  base: string;
}

/** Registers the hooks of a `CrashWorld` in the calling `describe` and returns it (its fields are set once the hooks ran). */
export function crashWorldPerTest(prefix: string): CrashWorld {
  const w = { server: undefined as unknown as ModelServer, base: '' };
  before(async () => (w.server = await ModelServer.start()));
  after(() => w.server.stop());
  beforeEach(() => (w.base = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', prefix)))));
  afterEach(() => fs.rmSync(w.base, { recursive: true, force: true }));
  return w;
}

export const read = (p: string): string => fs.readFileSync(p, 'utf8');

/** A worktree `name` of the checkout `ws` in the worktrees folder `wts` (left out of its base), on branch `arbor/<name>`, as the service makes one. */
export function worktreeIn(ws: string, wts: string, name: string, opts: { repos?: RepoStateCache; filesLater?: boolean } = {}): Promise<WorktreePlace> {
  return createWorktree({ bwrap: DEFAULT_BWRAP, parentRoot: ws, dir: path.join(wts, name), branch: `arbor/${name}`, excludes: [wts], note: name, ...opts });
}
