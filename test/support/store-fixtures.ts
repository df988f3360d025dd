// Shared fixtures for the store specs and the crash writer: deterministic events (so a
// reader can tell a right event from a wrong one by its seq alone), headers, temp folders
// and a way to leave a store folder exactly as a killed process would.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SessionEvent, SessionHeader } from '../../src/core/session/events';
import { Store } from '../../src/core/store';

const T0 = Date.UTC(2025, 0, 1);

/** The sessions test/support/crash-writer.ts writes: a root, its child (same tree file), another root. */
export const CRASH_SESSIONS = ['crash-root', 'crash-child', 'crash-other'] as const;

/** A small, seedable PRNG (mulberry32): the same seed gives the same numbers in every process. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

const WORDS = [
  'arbor',
  'tree',
  'fork',
  'leaf',
  'journal',
  'fsync',
  'état',
  'ñandú',
  '木',
  '枝',
  '🌳',
  'kill -9',
  'quote"',
  'back\\slash',
  'tab\t',
  'line\nbreak',
];

/** Text of about `approx` characters, a pure function of `key` (multi-byte and escaped characters included). */
export function textFor(key: string, approx = 500): string {
  const rnd = prng(hash(key));
  const target = Math.floor(approx * (0.7 + 0.6 * rnd()));
  let out = `${key}:`;
  while (out.length < target) out += ` ${WORDS[Math.floor(rnd() * WORDS.length)]}${Math.floor(rnd() * 1000)}`;
  return out;
}

/**
 * The event a session holds at `seq`, a pure function of (session, seq). Every five seqs
 * form one whole turn (start, user message, assistant call, tool result, end), so a log
 * cut anywhere is still a valid session log (an open turn at worst).
 */
export function eventAt(session: string, seq: number): SessionEvent {
  const at = new Date(T0 + seq * 1000).toISOString();
  const turn = `t${Math.floor(seq / 5)}`;
  const call = `c${Math.floor(seq / 5)}`;
  switch (seq % 5) {
    case 0:
      return { seq, at, type: 'turn/start', turnId: turn };
    case 1:
      return { seq, at, type: 'user/message', text: textFor(`${session}/${seq}`), source: { kind: 'user' } };
    case 2:
      return {
        seq,
        at,
        type: 'assistant/message',
        text: textFor(`${session}/${seq}`, 200),
        model: 'test-model',
        toolCalls: [{ id: call, name: 'read_file', arguments: JSON.stringify({ path: `src/${seq}.ts` }) }],
        usage: { promptTokens: seq, completionTokens: 7, cacheHitTokens: 3 },
      };
    case 3:
      return { seq, at, type: 'tool/result', callId: call, name: 'read_file', content: textFor(`${session}/${seq}`, 300), isError: false };
    default:
      return { seq, at, type: 'turn/end', turnId: turn, stopReason: 'completed' };
  }
}

/** Events [from, to) of `session`. */
export function eventsFor(session: string, from: number, to: number): SessionEvent[] {
  const out: SessionEvent[] = [];
  for (let seq = from; seq < to; seq++) out.push(eventAt(session, seq));
  return out;
}

export function rootHeader(id: string, extra: Partial<SessionHeader> = {}): SessionHeader {
  return { id, createdAt: new Date(T0).toISOString(), origin: 'user', title: `Root ${id}`, cwd: '/work/project', ...extra };
}

/** The ids of `parent`'s children in `store`, sorted. */
export function childIds(store: Pick<Store, 'children'>, parent: string): string[] {
  return store
    .children(parent)
    .map((h) => h.id)
    .sort();
}

export function childHeader(id: string, parent: string, depth = 1, extra: Partial<SessionHeader> = {}): SessionHeader {
  return {
    id,
    createdAt: new Date(T0 + 1000).toISOString(),
    origin: 'subagent',
    parentSession: parent,
    delegationDepth: depth,
    agentPreset: 'explorer',
    ...extra,
  };
}

/** A fresh folder under the OS temp dir; `remove()` deletes it. */
export function tempDir(prefix = 'arbor-store-'): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Registers mocha hooks in the calling describe: a fresh folder per test (`dir`), and after
 * the test every Store `openStore` opened in it closed, then the folder removed.
 */
export function storeFolderPerTest(): { readonly dir: string; openStore(opts?: Parameters<typeof Store.open>[1]): Promise<Store> } {
  let tmp: ReturnType<typeof tempDir>;
  let open: Store[] = [];
  beforeEach(() => {
    tmp = tempDir();
    open = [];
  });
  afterEach(async () => {
    for (const s of open) await s.close().catch(() => undefined);
    tmp.remove();
  });
  return {
    get dir() {
      return tmp.dir;
    },
    async openStore(opts = {}) {
      const s = await Store.open(tmp.dir, opts);
      open.push(s);
      return s;
    },
  };
}

/** Every regular file under `dir` (relative path → bytes), the lock file excepted (its liveness token, a socket, is not a regular file: opening it fails). */
export function snapshotFiles(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (rel: string): void => {
    for (const ent of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = path.join(rel, ent.name);
      if (ent.isDirectory()) walk(r);
      else if (ent.isFile() && ent.name !== 'arbor.lock') out.set(r, fs.readFileSync(path.join(dir, r)));
    }
  };
  walk('');
  return out;
}

/** Make `dir` hold exactly the files of `snap` (the lock file aside). */
export function restoreFiles(dir: string, snap: Map<string, Buffer>): void {
  for (const rel of snapshotFiles(dir).keys()) if (!snap.has(rel)) fs.rmSync(path.join(dir, rel));
  for (const [rel, bytes] of snap) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), bytes);
  }
}

/**
 * Close `store` but leave its folder as it was before closing: as if the process had been
 * killed right then (journals not folded into the database files).
 */
export async function closeAsIfKilled(store: { dir: string; close(): Promise<void> }): Promise<void> {
  const snap = snapshotFiles(store.dir);
  await store.close();
  restoreFiles(store.dir, snap);
}

/** Byte size of a file, 0 when it does not exist. */
export function sizeOf(file: string): number {
  return fs.existsSync(file) ? fs.statSync(file).size : 0;
}
