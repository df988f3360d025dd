import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { looksBinary, openForRead, readHead } from './fsio';
import { globMatches, globToRegExp } from './glob';
import { LineMatcher } from './line-matcher';
import { LineReader } from './line-reader';
import { displayPath, resolveForRead } from './paths';
import { cancelled, fail, formatBytes, guard, ok } from './result';
import type { Tool, ToolResult } from './tool';
import { joinRel, SKIPPED_DIRS, sortedEntries } from './walk';

export interface SearchFilesOptions {
  /** Matching lines returned by one call (default 200). */
  maxMatches?: number;
  /** Characters of a matching line shown (default 300). */
  maxLineLength?: number;
  /** Files larger than this are skipped (default 2 MB). */
  maxFileBytes?: number;
  /** Files searched by one call before stopping (default 20000). */
  maxFiles?: number;
  /** Time the pattern may take on one batch of files before the search is stopped (default 5000 ms). */
  timeLimitMs?: number;
  /** Bytes of one file named by `path` searched when it is larger than maxFileBytes (default 64 MB); the rest is left, and said so. */
  maxScanBytes?: number;
}

/** Characters of one line handed to the pattern when a big file is streamed; a match past them is not seen. */
const STREAMED_LINE_CHARS = 16 * 1024;

/** Text handed to the matcher at once: large enough to amortise a message, small enough to stop early. */
const BATCH_CHARS = 1024 * 1024;
const BATCH_FILES = 200;

const NAME = 'search_files';

export function createSearchFilesTool(options: SearchFilesOptions = {}): Tool {
  const maxMatches = options.maxMatches ?? 200;
  const maxLineLength = options.maxLineLength ?? 300;
  const maxFileBytes = options.maxFileBytes ?? 2 * 1024 * 1024;
  const maxFiles = options.maxFiles ?? 20000;
  const timeLimitMs = options.timeLimitMs ?? 5000;
  const maxScanBytes = options.maxScanBytes ?? 64 * 1024 * 1024;
  return {
    name: NAME,
    description:
      'Search the text files of the workspace for a JavaScript regular expression, line by line. ' +
      'Returns "path:line: text" for each matching line (paths relative to the workspace root), sorted by path. ' +
      'Skips .git, node_modules, binary files and symbolic links.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'a JavaScript regular expression, e.g. "function\\\\s+main" (escape special characters for a literal search)' },
        path: { type: 'string', description: 'a directory or file to search, relative to the workspace root (default ".", the root)' },
        include: { type: 'string', description: 'only files matching this glob, e.g. "*.ts", "src/**/*.test.ts" or "*.{js,mjs}"' },
        ignoreCase: { type: 'boolean', description: 'match case-insensitively (default false)' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    execute: (args, ctx) =>
      guard(NAME, ctx.signal, async (): Promise<ToolResult> => {
        const pattern = args.pattern as string;
        if (pattern === '') return fail('INVALID_ARGUMENTS', `${NAME}: 'pattern' is empty; give a regular expression to look for`);
        let re: RegExp;
        try {
          re = new RegExp(pattern, args.ignoreCase === true ? 'i' : '');
        } catch (e) {
          return fail(
            'INVALID_REGEX',
            `${NAME}: invalid regular expression ${JSON.stringify(pattern)}: ${(e as Error).message}. ` +
              'Escape special characters such as ( [ { . * + ? with a backslash to match them literally.',
          );
        }
        const include = args.include as string | undefined;
        let includeRe: RegExp | undefined;
        if (include) {
          try {
            includeRe = globToRegExp(include);
          } catch (e) {
            return fail('INVALID_ARGUMENTS', `${NAME}: invalid include glob: ${(e as Error).message}`);
          }
        }

        const r = await resolveForRead(ctx, (args.path as string | undefined) ?? '.');
        if (!r.ok) return fail(r.code, `${NAME}: ${r.message}`);
        const shown = displayPath(r);
        if (r.kind === 'missing') return fail('NOT_FOUND', `${NAME}: '${shown}' does not exist`);
        if (r.kind === 'other') return fail('NOT_A_FILE', `${NAME}: '${shown}' is not a regular file or directory`);

        const matches: string[] = [];
        let files = 0;
        let skippedLarge = 0;
        let skippedBinary = 0;
        let stopped: 'matches' | 'files' | 'too-slow' | undefined;
        const base = r.root ? r.relative : r.realPath;
        const matcher = new LineMatcher(re.source, re.flags, timeLimitMs, ctx.signal);
        /** `first`: the line number (0-based) the text starts at, for a part of a streamed file. */
        let batch: { rel: string; text: string; first: number }[] = [];
        let streamed: { rel: string; scanned: number; size: number; cutLines: number } | undefined;
        let batchChars = 0;

        // Matching runs in a worker, a batch at a time, so a pathological pattern stops at the time limit.
        const flush = async (): Promise<void> => {
          if (batch.length === 0 || stopped || ctx.signal.aborted) return;
          const texts = batch;
          batch = [];
          batchChars = 0;
          const budget = maxMatches - matches.length + 1; // one more than allowed says "there were more"
          const outcome = await matcher.match(
            texts.map((t) => t.text),
            budget,
          );
          if (outcome.kind !== 'hits') {
            if (outcome.kind === 'too-slow') stopped = 'too-slow';
            return;
          }
          const split = new Map<number, string[]>();
          for (const [f, line, index] of outcome.hits) {
            if (matches.length >= maxMatches) {
              stopped = 'matches';
              return;
            }
            let lines = split.get(f);
            if (!lines) split.set(f, (lines = texts[f].text.split(/\r?\n/)));
            const text = lines[line];
            matches.push(`${texts[f].rel}:${texts[f].first + line + 1}: ${excerpt(text, index, maxLineLength)}`);
          }
        };

        const searchFile = async (abs: string, rel: string, fromSearchDir: string, named = false): Promise<void> => {
          if (includeRe && !globMatches(includeRe, include!, [fromSearchDir, rel])) return;
          if (++files > maxFiles) {
            stopped = 'files';
            return;
          }
          let text: string;
          try {
            const fh = await openForRead(abs);
            try {
              const { size } = await fh.stat();
              if (size > maxFileBytes && named) return await streamFile(fh, rel, size);
              // Read at most one byte past the limit, whatever the size said: a file that grows
              // (a log) or lies about its size (/proc) is not read to its end.
              const buf = size > maxFileBytes ? undefined : await readAtMost(fh, maxFileBytes + 1, size);
              if (!buf || buf.length > maxFileBytes) {
                skippedLarge++;
                return;
              }
              if (looksBinary(buf)) {
                skippedBinary++;
                return;
              }
              text = buf.toString('utf8');
            } finally {
              await fh.close();
            }
          } catch {
            return; // unreadable files are not matches
          }
          batch.push({ rel, text, first: 0 });
          batchChars += text.length;
          if (batchChars >= BATCH_CHARS || batch.length >= BATCH_FILES) await flush();
        };

        // A file the call names that is too big to read whole: its lines are read a batch at
        // a time, each cut to STREAMED_LINE_CHARS, up to maxScanBytes of it.
        const streamFile = async (fh: FileHandle, rel: string, size: number): Promise<void> => {
          if (looksBinary(await readHead(fh))) {
            skippedBinary++;
            return;
          }
          const reader = new LineReader(fh, maxScanBytes, ctx.signal);
          const state = { rel, scanned: 0, size, cutLines: 0 };
          streamed = state;
          let lines: string[] = [];
          let first = 0;
          let chars = 0;
          const send = async (): Promise<void> => {
            if (lines.length) batch.push({ rel, text: lines.join('\n'), first });
            first += lines.length;
            lines = [];
            chars = 0;
            await flush();
          };
          for (;;) {
            if (stopped || ctx.signal.aborted) break;
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
        };

        const walk = async (dirAbs: string, dirRel: string, fromSearchDir: string): Promise<void> => {
          let entries: Awaited<ReturnType<typeof sortedEntries>>;
          try {
            entries = await sortedEntries(dirAbs);
          } catch {
            return;
          }
          for (const entry of entries) {
            if (ctx.signal.aborted || stopped) return;
            const abs = path.join(dirAbs, entry.name);
            const rel = r.root ? joinRel(dirRel, entry.name) : path.join(dirRel, entry.name);
            const local = joinRel(fromSearchDir, entry.name);
            // Symbolic links are not followed: a link may point outside the workspace.
            if (entry.isDirectory()) {
              if (!SKIPPED_DIRS.has(entry.name)) await walk(abs, rel, local);
            } else if (entry.isFile()) {
              await searchFile(abs, rel, local);
            }
          }
        };

        try {
          if (r.kind === 'file') await searchFile(r.realPath, base, path.basename(r.realPath), true);
          else await walk(r.realPath, base, '');
          await flush();
        } finally {
          matcher.close();
        }
        if (ctx.signal.aborted) return cancelled(NAME);
        if (stopped === 'too-slow') {
          const found = matches.length ? `\n\nMatches found before it stopped:\n${matches.join('\n')}` : '';
          return fail(
            'TIMEOUT',
            `${NAME}: search stopped after ${formatSeconds(timeLimitMs)}: the pattern /${pattern}/ is too slow (catastrophic backtracking?); ` +
              'simplify it (avoid nested quantifiers such as (a+)+ or (.*)*, anchor it, or search for a plain word).' +
              found,
          );
        }

        const notes: string[] = [];
        if (stopped === 'matches') notes.push(`[Stopped at ${maxMatches} matches; narrow the pattern, the path or the include filter.]`);
        if (stopped === 'files') notes.push(`[Stopped after ${maxFiles} files; search a subdirectory.]`);
        if (streamed && streamed.scanned < streamed.size && !stopped) {
          notes.push(
            `[Searched the first ${formatBytes(streamed.scanned)} of ${streamed.rel} (${formatBytes(streamed.size)}); ` +
              'search the rest with run_command (e.g. grep -n).]',
          );
        }
        if (streamed?.cutLines)
          notes.push(`[${streamed.cutLines} line(s) longer than ${STREAMED_LINE_CHARS} characters were searched only in their first ${STREAMED_LINE_CHARS}.]`);
        if (skippedLarge) notes.push(`[Skipped ${skippedLarge} file(s) larger than ${Math.round(maxFileBytes / 1024)} KB.]`);
        if (skippedBinary) notes.push(`[Skipped ${skippedBinary} binary file(s).]`);
        const where = `${shown}${include ? ` (files matching ${include})` : ''}`;
        const body = matches.length
          ? matches.join('\n')
          : `No matches for /${pattern}/${args.ignoreCase === true ? 'i' : ''} in ${where}; ${Math.min(files, maxFiles)} file(s) searched.`;
        return ok(body + (notes.length ? `\n\n${notes.join('\n')}` : ''));
      }),
  };
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

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
