import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { isPathChanged } from './beneath';
import { looksBinary, openForRead, openRead, readHead } from './fsio';
import { globMatches } from './glob';
import { LineMatcher } from './line-matcher';
import { LineReader } from './line-reader';
import type { ResolvedPath } from './paths';
import { joinRel, SKIPPED_DIRS, WalkDir } from './walk';

/** What one `search_files` call looks for (its arguments, checked). */
export interface SearchQuery {
  pattern: string;
  re: RegExp;
  ignoreCase: boolean;
  /** The include glob as given, and compiled. */
  include?: { glob: string; re: RegExp };
}

export interface SearchLimits {
  maxMatches: number;
  maxLineLength: number;
  maxFileBytes: number;
  maxFiles: number;
  timeLimitMs: number;
  maxScanBytes: number;
}

/** Why a search stopped before it had looked everywhere. */
export type SearchStop = 'matches' | 'files' | 'too-slow';

/** Characters of one line handed to the pattern when a big file is streamed; a match past them is not seen. */
export const STREAMED_LINE_CHARS = 16 * 1024;

/** Text handed to the matcher at once: large enough to amortise a message, small enough to stop early. */
const BATCH_CHARS = 1024 * 1024;
const BATCH_FILES = 200;

/** One piece of text for the matcher; `first` is the line number (0-based) it starts at, for a part of a streamed file. */
interface Piece {
  rel: string;
  text: string;
  first: number;
}

/**
 * One search over a file or a directory tree: files are read (the big one the call names is
 * streamed), batched, and matched in a worker (`LineMatcher`) so a pathological pattern stops
 * at the time limit. What it found and why it stopped are its fields once `run` returns.
 */
export class FileSearch {
  readonly matches: string[] = [];
  files = 0;
  skippedLarge = 0;
  skippedBinary = 0;
  stopped: SearchStop | undefined;
  /** The file the call named, when it was too big to read whole: how much of it was searched. */
  streamed: { rel: string; scanned: number; size: number; cutLines: number } | undefined;
  /** Folders not searched: each was a link (or no folder) when the walk reached it, so it changed while searched. */
  readonly changed: string[] = [];
  private batch: Piece[] = [];
  private batchChars = 0;
  private readonly matcher: LineMatcher;

  constructor(
    private readonly query: SearchQuery,
    private readonly limits: SearchLimits,
    private readonly signal: AbortSignal,
  ) {
    this.matcher = new LineMatcher(query.re.source, query.re.flags, limits.timeLimitMs, signal);
  }

  /** Searches `target` (a file or a directory) to the end, a limit or an abort. */
  async run(target: ResolvedPath): Promise<void> {
    const base = target.root ? target.relative : target.realPath;
    try {
      if (target.kind === 'file') await this.searchFile(() => openForRead(target.realPath, target.root), base, path.basename(target.realPath), true);
      else await this.walkFrom(target, base);
      await this.flush();
    } finally {
      this.matcher.close();
    }
  }

  private get done(): boolean {
    return this.stopped !== undefined || this.signal.aborted;
  }

  /** The walk of a folder target, through folders held open from its root (`WalkDir`). */
  private async walkFrom(target: ResolvedPath, base: string): Promise<void> {
    let dir: WalkDir;
    try {
      dir = await WalkDir.open(target.realPath, target.root);
    } catch (e) {
      if (isPathChanged(e)) this.changed.push(base);
      return;
    }
    try {
      await this.walk(target, dir, base, '');
    } finally {
      await dir.close();
    }
  }

  private async walk(target: ResolvedPath, dir: WalkDir, dirRel: string, fromSearchDir: string): Promise<void> {
    let entries: Awaited<ReturnType<WalkDir['entries']>>;
    try {
      entries = await dir.entries();
    } catch {
      return;
    }
    for (const entry of entries) {
      if (this.done) return;
      const rel = target.root ? joinRel(dirRel, entry.name) : path.join(dirRel, entry.name);
      const local = joinRel(fromSearchDir, entry.name);
      // Symbolic links are not followed: a link may point outside the workspace. Nor is a folder
      // that became one since it was listed: each is opened through the folder above it.
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) await this.walkInto(target, dir, entry.name, rel, local);
      } else if (entry.isFile()) {
        await this.searchFile(() => openRead(dir.at(entry.name)), rel, local);
      }
    }
  }

  private async walkInto(target: ResolvedPath, dir: WalkDir, name: string, rel: string, local: string): Promise<void> {
    let sub: WalkDir;
    try {
      sub = await dir.child(name);
    } catch (e) {
      if (isPathChanged(e)) this.changed.push(rel);
      return; // unreadable folders are not searched, as before
    }
    try {
      await this.walk(target, sub, rel, local);
    } finally {
      await sub.close();
    }
  }

  private async searchFile(open: () => Promise<FileHandle>, rel: string, fromSearchDir: string, named = false): Promise<void> {
    const include = this.query.include;
    if (include && !globMatches(include.re, include.glob, [fromSearchDir, rel])) return;
    if (++this.files > this.limits.maxFiles) {
      this.stopped = 'files';
      return;
    }
    const text = await this.readWhole(open, rel, named);
    if (text === undefined) return;
    this.batch.push({ rel, text, first: 0 });
    this.batchChars += text.length;
    if (this.batchChars >= BATCH_CHARS || this.batch.length >= BATCH_FILES) await this.flush();
  }

  /** The file's text; undefined when it is skipped (too large, binary, unreadable) or was streamed instead. */
  private async readWhole(open: () => Promise<FileHandle>, rel: string, named: boolean): Promise<string | undefined> {
    const max = this.limits.maxFileBytes;
    try {
      const fh = await open();
      try {
        const { size } = await fh.stat();
        if (size > max && named) {
          await this.streamFile(fh, rel, size);
          return undefined;
        }
        // Read at most one byte past the limit, whatever the size said: a file that grows
        // (a log) or lies about its size (/proc) is not read to its end.
        const buf = size > max ? undefined : await readAtMost(fh, max + 1, size);
        if (!buf || buf.length > max) {
          this.skippedLarge++;
          return undefined;
        }
        if (looksBinary(buf)) {
          this.skippedBinary++;
          return undefined;
        }
        return buf.toString('utf8');
      } finally {
        await fh.close();
      }
    } catch {
      return undefined; // unreadable files are not matches
    }
  }

  /**
   * A file the call names that is too big to read whole: its lines are read a batch at a time,
   * each cut to STREAMED_LINE_CHARS, up to maxScanBytes of it.
   */
  private async streamFile(fh: FileHandle, rel: string, size: number): Promise<void> {
    if (looksBinary(await readHead(fh))) {
      this.skippedBinary++;
      return;
    }
    const reader = new LineReader(fh, this.limits.maxScanBytes, this.signal);
    const state = { rel, scanned: 0, size, cutLines: 0 };
    this.streamed = state;
    let lines: string[] = [];
    let first = 0;
    let chars = 0;
    const send = async (): Promise<void> => {
      if (lines.length) this.batch.push({ rel, text: lines.join('\n'), first });
      first += lines.length;
      lines = [];
      chars = 0;
      await this.flush();
    };
    while (!this.done) {
      const line = await reader.readLine(STREAMED_LINE_CHARS);
      if (typeof line === 'string') break;
      if (line.chars === undefined || line.chars > STREAMED_LINE_CHARS || !line.complete) state.cutLines++;
      const t = line.text.length > STREAMED_LINE_CHARS ? line.text.slice(0, STREAMED_LINE_CHARS) : line.text;
      lines.push(t);
      chars += t.length;
      if (chars >= BATCH_CHARS) await send();
    }
    await send();
    state.scanned = reader.scanned;
  }

  /** Matches the batch collected so far (in the worker) and keeps its hits, up to maxMatches. */
  private async flush(): Promise<void> {
    if (this.batch.length === 0 || this.done) return;
    const pieces = this.batch;
    this.batch = [];
    this.batchChars = 0;
    const room = this.limits.maxMatches - this.matches.length + 1; // one more than allowed says "there were more"
    const outcome = await this.matcher.match(
      pieces.map((p) => p.text),
      room,
    );
    if (outcome.kind !== 'hits') {
      if (outcome.kind === 'too-slow') this.stopped = 'too-slow';
      return;
    }
    const split = new Map<number, string[]>();
    for (const [f, line, index] of outcome.hits) {
      if (this.matches.length >= this.limits.maxMatches) {
        this.stopped = 'matches';
        return;
      }
      let lines = split.get(f);
      if (!lines) split.set(f, (lines = pieces[f].text.split(/\r?\n/)));
      this.matches.push(`${pieces[f].rel}:${pieces[f].first + line + 1}: ${excerpt(lines[line], index, this.limits.maxLineLength)}`);
    }
  }
}

/** Up to `max` bytes from the start of the file, however long it is (its size is only the first guess). */
async function readAtMost(fh: FileHandle, max: number, size: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let got = 0;
  let want = Math.min(max, size + 1);
  while (got < max) {
    const part = Buffer.allocUnsafe(Math.max(1, want));
    const { bytesRead } = await fh.read(part, 0, part.length, got);
    if (bytesRead === 0) break;
    parts.push(part.subarray(0, bytesRead));
    got += bytesRead;
    want = Math.min(max - got, 64 * 1024);
  }
  return Buffer.concat(parts, got);
}

/** The line, or a window of it around the match when it is long. */
function excerpt(line: string, at: number, max: number): string {
  const trimmed = line.trimEnd();
  if (trimmed.length <= max) return trimmed;
  const from = Math.max(0, Math.min(at - Math.floor(max / 3), trimmed.length - max));
  return `${from > 0 ? '…' : ''}${trimmed.slice(from, from + max)}${from + max < trimmed.length ? '…' : ''}`;
}
