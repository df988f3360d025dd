import * as path from 'node:path';
import type { Agent } from '../agent/agent';
import { appendWithoutFold } from '../agent/session-writer';
import type { EventDraft, SessionEvent } from '../session/events';
import type { Store } from '../store/store';
import { lockPathOf, withPathLocks } from '../tools/path-lock';
import { describeCommands, withCommandsOut } from '../tools/roots-lock';
import { gitAvailable } from '../worktree/git-version';
import { applyRewind, type RewindChoice, type RewindOutcome } from './apply';
import { BlobRefs } from './blob-refs';
import { CallIntents, type CallRecoveryHost, type RecoveredCalls } from './call-intent';
import { type Forgotten, forgetBlobs } from './forget';
import { type RecoveredRewind, recoverIntents, writeIntent } from './intent';
import { type PlanHost, planRewind, planUndo, RewindError, type RewindPlan } from './plan';
import { CheckpointRecorder } from './recorder';
import { DEFAULT_MAX_FILE_BYTES, Shadows, shadowDirOf } from './shadow';

// The checkpoints façade (issue 24 part 1, decision 0059): the recorder the harness's row plugs
// into every agent, and rewind — plan (a preview, nothing written), apply, undo — for the
// panel, the CLI and tests. Layers above reach it only through these methods.

export interface CheckpointOptions {
  /** Record checkpoints (default true): `arbor.checkpoints.enabled`, `--no-checkpoints`. */
  enabled?: boolean;
  /** Files larger than this are left out and said once (default 10 MiB). */
  maxFileBytes?: number;
  /**
   * How old every file of a root must be before its stat digest lets a command's snapshot skip
   * git (default 2,000 ms, stat-index.ts): tests shorten it to reach the shortcut at all.
   */
  trustSlackMs?: number;
  /** Whether commands run in the OS sandbox here (the harness's probe); see `RecorderOptions.commandsConfined`. */
  commandsConfined?: () => Promise<boolean>;
}

export interface CheckpointHost {
  storeDir: string;
  store: Store;
  resident(id: string): Agent | undefined;
}

export const GIT_MISSING_NOTICE =
  'Checkpoints are off: git was not found on PATH, so file changes cannot be recorded or rewound. Everything else works; install git and restart to turn them on.';

export class CheckpointService {
  readonly recorder: CheckpointRecorder;
  private readonly shadows: Shadows;
  private readonly intents: CallIntents;
  /** Which blobs each session's log names, kept with every durable write (decision 0121). */
  private readonly refs: BlobRefs;
  private readonly maxFileBytes: number;
  private on: boolean;
  private gitOk: boolean | undefined;

  constructor(
    options: CheckpointOptions,
    private readonly host: CheckpointHost,
  ) {
    this.on = options.enabled ?? true;
    this.shadows = new Shadows(host.storeDir, options.trustSlackMs);
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.intents = new CallIntents(host.storeDir);
    this.refs = new BlobRefs(path.join(host.storeDir, 'checkpoints'), host.store);
    this.recorder = new CheckpointRecorder({
      intents: this.intents,
      shadows: this.shadows,
      resident: (id) => host.resident(id),
      enabled: () => this.on,
      maxFileBytes: this.maxFileBytes,
      gitReady: () => this.gitReady(),
      nameOf: (id) => nameOf(host.store, id),
      ...(options.commandsConfined ? { commandsConfined: options.commandsConfined } : {}),
    });
  }

  get enabled(): boolean {
    return this.on;
  }

  /** The setting changed: recording follows from the next tool call. */
  setEnabled(on: boolean): void {
    this.on = on;
  }

  /** Whether git runs here (probed once); when not, `notice` says so and nothing is recorded. */
  async gitReady(): Promise<boolean> {
    this.gitOk ??= await gitAvailable();
    return this.gitOk;
  }

  /** What a host shows once: checkpoints are on but cannot work here (git missing); undefined otherwise. */
  async notice(): Promise<string | undefined> {
    return this.on && !(await this.gitReady()) ? GIT_MISSING_NOTICE : undefined;
  }

  /** A preview: the files the node (with `subtree`, and its descendants) changed after `toSeq`, what they go back to, and the conflicts. Writes nothing. */
  async plan(req: { sessionId: string; toSeq: number; subtree?: boolean }): Promise<RewindPlan> {
    await this.ready();
    return planRewind(this.planHost(), { sessionId: req.sessionId, toSeq: req.toSeq, subtree: req.subtree ?? false });
  }

  /** A preview of undoing the rewind recorded at `seq` of the node's log. */
  async planUndo(sessionId: string, seq: number): Promise<RewindPlan> {
    await this.ready();
    return planUndo(this.planHost(), { sessionId, seq });
  }

  /** Write the plan (conflicts per `choices`, else `onConflict`; none given for a conflict: refused, nothing written). */
  async apply(plan: RewindPlan, choices: Readonly<Record<string, RewindChoice>> = {}, onConflict?: RewindChoice): Promise<RewindOutcome> {
    await this.ready();
    const storeDir = this.host.storeDir;
    // The file tools' locks of every file it may write, from its checks to its last write: an
    // agent's write_file or edit_file of one runs wholly before (a conflict the check sees) or after.
    // Inside them, no command may run in a root holding one of its files (roots-lock.ts): one
    // under way refuses the rewind, one asked for meanwhile waits for it.
    const files = plan.files.map((f) => f.path);
    return withPathLocks(files.map(lockPathOf), () =>
      withCommandsOut(
        files,
        (busy) =>
          new RewindError(
            'BUSY',
            `Nothing was changed: a command is running where the rewind would write (${describeCommands(busy)}); written now, the rewind would be recorded as that command's change, and could overwrite what it writes unseen. Wait for it to end (or stop that agent), then apply the rewind again.`,
          ),
        () =>
          this.recording(() =>
            applyRewind(
              { shadows: this.shadows, log: async (id) => this.recordLog(id), intend: (intent) => writeIntent(storeDir, intent.changes[0].callId, intent) },
              plan,
              choices,
              onConflict,
            ),
          ),
      ),
    );
  }

  /**
   * Sessions `ids` were deleted (durably, before this is called): the blobs no remaining session,
   * no shadow's index, no crash intent and no recording under way needs are removed from every
   * shadow repository of the store (`forget.ts`). Also after a kill between a deletion and its
   * sweep: the next one removes what was left. Without git (the index cannot be read) nothing goes.
   */
  async forget(ids: readonly string[]): Promise<Forgotten> {
    this.recorder.forget(ids);
    this.refs.drop(ids);
    if (!(await this.gitReady())) return { removed: 0, failed: [] };
    const roots = new Map((await this.shadows.opened()).map((s) => [shadowDirOf(this.host.storeDir, s.root), s.root] as const));
    const out = await forgetBlobs({
      storeDir: this.host.storeDir,
      pins: this.shadows.pins,
      roots,
      maxFileBytes: this.maxFileBytes,
      // The remaining sessions' blobs from the index: only a log it lacks (or lacks the end of) is read.
      referenced: () => this.refs.current(),
    });
    await this.refs.persist();
    return out;
  }

  /**
   * The harness is closing and nothing more is appended: the index is written for the next
   * process when an append named a blob since it was last written (`blob-refs.ts`); a close after
   * turns that named none leaves the file, whose lag costs the next sweep a read of the new events.
   */
  persistRefs(): Promise<void> {
    return this.refs.persist('named');
  }

  /** `fn` as a recording: the blobs it stores are held from a deletion's sweep until it ends. */
  private async recording<T>(fn: () => Promise<T>): Promise<T> {
    const end = this.shadows.pins.begin();
    try {
      return await fn();
    } finally {
      end();
    }
  }

  /**
   * At open, before any session runs: each rewind a crash cut between its first file and its
   * record gets the record of the files it had written (so it can be undone), as a failure part
   * way does in process. Returns what was recovered.
   */
  recoverRewinds(): Promise<RecoveredRewind[]> {
    return recoverIntents(this.host.storeDir, { has: (id) => this.host.store.has(id), events: (id) => this.events(id), log: async (id) => this.recordLog(id) });
  }

  /**
   * At open, before any session runs: each writing call a crash cut between its write and its
   * step's record gets a record of what it changed (so a rewind restores it). Without git, the
   * intents only go.
   */
  async recoverCalls(): Promise<RecoveredCalls[]> {
    if (!(await this.gitReady())) {
      await this.intents.recover({ ...this.recoveryHost(), has: () => false });
      return [];
    }
    return this.recording(() => this.intents.recover(this.recoveryHost()));
  }

  private recoveryHost(): CallRecoveryHost {
    return {
      shadows: this.shadows,
      maxFileBytes: this.maxFileBytes,
      has: (id) => this.host.store.has(id),
      events: (id) => this.events(id),
      log: async (id) => this.recordLog(id),
    };
  }

  /** The seq of the node's last rewind not undone since, for "Undo rewind"; undefined when there is none. */
  async lastRewind(sessionId: string): Promise<number | undefined> {
    const events = await this.events(sessionId);
    const undone = new Set<number>();
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i];
      if (e.type !== 'checkpoint' || !e.rewind) continue;
      if (e.rewind.undoes !== undefined) {
        undone.add(e.rewind.undoes);
        continue;
      }
      if (!undone.has(e.seq)) return e.seq;
    }
    return undefined;
  }

  /** Command snapshots so far, over every root: taken by git, and answered by the stat digest alone. */
  snapshotCounts(): Promise<{ git: number; skipped: number }> {
    return this.shadows.counts();
  }

  /** Every blob queued is written (the harness is closing). */
  close(): Promise<void> {
    return this.shadows.settled();
  }

  private async ready(): Promise<void> {
    if (!(await this.gitReady())) throw new RewindError('DISABLED', GIT_MISSING_NOTICE);
  }

  private async events(id: string): Promise<readonly SessionEvent[]> {
    if (!this.host.store.has(id) && !this.host.resident(id))
      throw new RewindError('NO_SESSION', 'There is no such conversation in this store; pick one `arbor sessions` lists.');
    return (this.host.resident(id)?.session ?? (await this.host.store.inspect(id))).events;
  }

  /**
   * Where a rewind's record (or a recovered one) goes, through the store's gate of the node's log
   * (decision 0129): the agent resident once the gate is taken, else the stored log appended to
   * without reading it (a `checkpoint` has no ordering rule; decision 0128). Reading and folding it
   * only to append cost a rewind a whole parse of the node's log, which grows by a record each rewind.
   */
  private recordLog(id: string): { append(draft: EventDraft): Promise<SessionEvent> } {
    const { store } = this.host;
    return { append: (draft) => store.logGate.run(id, () => this.host.resident(id)?.append(draft) ?? appendWithoutFold(store, id, draft)) };
  }

  private planHost(): PlanHost {
    const store = this.host.store;
    return {
      shadows: this.shadows,
      events: (id) => this.events(id),
      descendants: (id) => store.descendants(id).map((h) => h.id),
      treeOf: (id) => {
        let root = id;
        for (let p = store.header(root)?.parentSession; p; p = store.header(root)?.parentSession) root = p;
        return [root, ...store.descendants(root).map((h) => h.id)];
      },
      nameOf: (id) => nameOf(store, id),
    };
  }
}

/** A session as the panel names it. */
function nameOf(store: Store, id: string): string {
  return store.summaryRef(id)?.label ?? store.header(id)?.title ?? 'another agent';
}
