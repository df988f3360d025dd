import { FileSearch, type SearchLimits, type SearchQuery, STREAMED_LINE_CHARS } from './file-search';
import { globToRegExp } from './glob';
import { displayPath, type ResolvedPath, resolveForRead } from './paths';
import { cancelled, fail, formatBytes, guard, ok } from './result';
import type { Tool, ToolContext, ToolResult } from './tool';

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

const NAME = 'search_files';

/** One call: its arguments checked (`parseQuery`), its path resolved (`resolveTarget`), searched (`FileSearch`), put in words (`searchResult`). */
export function createSearchFilesTool(options: SearchFilesOptions = {}): Tool {
  const limits: SearchLimits = {
    maxMatches: options.maxMatches ?? 200,
    maxLineLength: options.maxLineLength ?? 300,
    maxFileBytes: options.maxFileBytes ?? 2 * 1024 * 1024,
    maxFiles: options.maxFiles ?? 20000,
    timeLimitMs: options.timeLimitMs ?? 5000,
    maxScanBytes: options.maxScanBytes ?? 64 * 1024 * 1024,
  };
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
        const query = parseQuery(args);
        if ('isError' in query) return query;
        const target = await resolveTarget(ctx, args.path);
        if ('isError' in target) return target;
        const search = new FileSearch(query, limits, ctx.signal);
        await search.run(target);
        if (ctx.signal.aborted) return cancelled(NAME);
        return searchResult(search, query, displayPath(target), limits);
      }),
  };
}

/** The pattern and the include glob, compiled; a failure says what is wrong and how to write it. */
function parseQuery(args: Record<string, unknown>): SearchQuery | ToolResult {
  const pattern = args.pattern as string;
  if (pattern === '') return fail('INVALID_ARGUMENTS', `${NAME}: 'pattern' is empty; give a regular expression to look for`);
  const ignoreCase = args.ignoreCase === true;
  let re: RegExp;
  try {
    re = new RegExp(pattern, ignoreCase ? 'i' : '');
  } catch (e) {
    return fail(
      'INVALID_REGEX',
      `${NAME}: invalid regular expression ${JSON.stringify(pattern)}: ${(e as Error).message}. ` +
        'Escape special characters such as ( [ { . * + ? with a backslash to match them literally.',
    );
  }
  const glob = args.include as string | undefined;
  if (!glob) return { pattern, re, ignoreCase };
  try {
    return { pattern, re, ignoreCase, include: { glob, re: globToRegExp(glob) } };
  } catch (e) {
    return fail('INVALID_ARGUMENTS', `${NAME}: invalid include glob: ${(e as Error).message}`);
  }
}

/** The file or directory to search (default: the workspace root), readable under the call's policy. */
async function resolveTarget(ctx: ToolContext, p: unknown): Promise<ResolvedPath | ToolResult> {
  const r = await resolveForRead(ctx, p ?? '.');
  if (!r.ok) return fail(r.code, `${NAME}: ${r.message}`);
  if (r.kind === 'missing') return fail('NOT_FOUND', `${NAME}: '${displayPath(r)}' does not exist`);
  if (r.kind === 'other') return fail('NOT_A_FILE', `${NAME}: '${displayPath(r)}' is not a regular file or directory`);
  return r;
}

/** The matches, or why there are none, and a note for each limit the search met. */
function searchResult(s: FileSearch, q: SearchQuery, shown: string, limits: SearchLimits): ToolResult {
  if (s.stopped === 'too-slow') {
    const found = s.matches.length ? `\n\nMatches found before it stopped:\n${s.matches.join('\n')}` : '';
    return fail(
      'TIMEOUT',
      `${NAME}: search stopped after ${formatSeconds(limits.timeLimitMs)}: the pattern /${q.pattern}/ is too slow (catastrophic backtracking?); ` +
        'simplify it (avoid nested quantifiers such as (a+)+ or (.*)*, anchor it, or search for a plain word).' +
        found,
    );
  }
  const notes = limitNotes(s, limits);
  const where = `${shown}${q.include ? ` (files matching ${q.include.glob})` : ''}`;
  const body = s.matches.length
    ? s.matches.join('\n')
    : `No matches for /${q.pattern}/${q.ignoreCase ? 'i' : ''} in ${where}; ${Math.min(s.files, limits.maxFiles)} file(s) searched.`;
  return ok(body + (notes.length ? `\n\n${notes.join('\n')}` : ''));
}

function limitNotes(s: FileSearch, limits: SearchLimits): string[] {
  const notes: string[] = [];
  const streamed = s.streamed;
  if (s.stopped === 'matches') notes.push(`[Stopped at ${limits.maxMatches} matches; narrow the pattern, the path or the include filter.]`);
  if (s.stopped === 'files') notes.push(`[Stopped after ${limits.maxFiles} files; search a subdirectory.]`);
  if (streamed && streamed.scanned < streamed.size && !s.stopped) {
    notes.push(
      `[Searched the first ${formatBytes(streamed.scanned)} of ${streamed.rel} (${formatBytes(streamed.size)}); ` +
        'search the rest with run_command (e.g. grep -n).]',
    );
  }
  if (streamed?.cutLines)
    notes.push(`[${streamed.cutLines} line(s) longer than ${STREAMED_LINE_CHARS} characters were searched only in their first ${STREAMED_LINE_CHARS}.]`);
  if (s.skippedLarge) notes.push(`[Skipped ${s.skippedLarge} file(s) larger than ${Math.round(limits.maxFileBytes / 1024)} KB.]`);
  if (s.skippedBinary) notes.push(`[Skipped ${s.skippedBinary} binary file(s).]`);
  if (s.changed.length)
    notes.push(
      `[Not searched: ${s.changed.join(', ')} (a folder that became a link while it was searched; the file tools never follow one). ` +
        'Something running in the workspace is replacing folders with links: search again once it ends.]',
    );
  return notes;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
