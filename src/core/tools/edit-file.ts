import { isPathChanged, pathChangedRefusal } from './beneath';
import { isHardLinkError, looksBinary, openForRead, type WriteOps, writeAtomic } from './fsio';
import { withPathLock } from './path-lock';
import { displayPath, hardLinkRefusal, type ResolvedPath, resolveForWrite } from './paths';
import { cancelled, describeIoError, fail, formatBytes, guard, ok } from './result';
import type { Tool, ToolContext, ToolResult } from './tool';
import { approveProtectedWrite } from './write-guard';

const NAME = 'edit_file';
/** Line numbers listed when oldText is ambiguous. */
const MAX_LISTED = 10;

export interface EditFileOptions {
  /** The file-system calls of the atomic write (tests simulate a full disk with them). */
  writeOps?: WriteOps;
  /** Files larger than this are not edited (default 64 MB): the whole text is held twice while it changes. */
  maxFileBytes?: number;
}

interface Change {
  oldText: string;
  newText: string;
  replaceAll: boolean;
}

export function createEditFileTool(options: EditFileOptions = {}): Tool {
  const maxFileBytes = options.maxFileBytes ?? 64 * 1024 * 1024;
  // Runs under the file's lock: the text is read, changed and written back with no other
  // write to this file in between, so a parallel edit is never computed from stale text.
  const edit = async (r: ResolvedPath, change: Change, ctx: ToolContext): Promise<ToolResult> => {
    let { oldText, newText } = change;
    const shown = displayPath(r);
    let buf: Buffer;
    try {
      // One open of the file through its pinned folder (beneath.ts): its size and its bytes are that file's.
      const fh = await openForRead(r.realPath, r.root);
      try {
        const { size } = await fh.stat();
        if (size > maxFileBytes) {
          return fail(
            'TOO_LARGE',
            `${NAME}: '${shown}' is ${formatBytes(size)}, more than the ${formatBytes(maxFileBytes)} edit_file changes; nothing was changed. ` +
              'Use run_command (e.g. sed -i) for huge files.',
          );
        }
        buf = await fh.readFile();
      } finally {
        await fh.close();
      }
    } catch (e) {
      if (isPathChanged(e)) return fail('OUTSIDE_WORKSPACE', pathChangedRefusal(NAME, shown, e, true));
      return fail('IO_ERROR', `${NAME}: cannot read '${shown}': ${describeIoError(e)}`);
    }
    if (looksBinary(buf)) return fail('BINARY_FILE', `${NAME}: '${shown}' is a binary file; edit_file changes text files only`);
    const text = buf.toString('utf8');

    let at = occurrences(text, oldText);
    if (at.length === 0 && text.includes('\r\n') && oldText.includes('\n') && !oldText.includes('\r')) {
      // The model saw lines, not line endings: match a CRLF file with LF text, keep CRLF.
      oldText = oldText.replace(/\n/g, '\r\n');
      newText = newText.replace(/\r?\n/g, '\r\n');
      at = occurrences(text, oldText);
    }
    if (at.length === 0) {
      const hint = text.includes(oldText.trim())
        ? ' It is there if leading and trailing whitespace is ignored: copy the text exactly, including indentation and line breaks.'
        : ' Read the file again (it may have changed) and copy the text exactly, without the line-number prefixes.';
      return fail('NO_MATCH', `${NAME}: oldText was not found in '${shown}'; nothing was changed.${hint}`);
    }
    const lines = linesOf(text, at);
    if (at.length > 1 && !change.replaceAll) {
      const listed = lines.slice(0, MAX_LISTED).join(', ') + (lines.length > MAX_LISTED ? ', …' : '');
      return fail(
        'AMBIGUOUS_MATCH',
        `${NAME}: oldText was found ${at.length} times in '${shown}' (lines ${listed}); nothing was changed. ` +
          'Include more surrounding lines so it matches once, or set replaceAll: true to replace every occurrence.',
      );
    }

    // split/join and slicing, never String.replace: `$&` in newText must stay literal.
    const updated = change.replaceAll ? text.split(oldText).join(newText) : text.slice(0, at[0]) + newText + text.slice(at[0] + oldText.length);
    const denied = await approveProtectedWrite(ctx, NAME, r, `replace ${at.length} occurrence${at.length === 1 ? '' : 's'} in ${r.relative}`, {
      before: text,
      after: updated,
    });
    if (denied) return denied;
    if (ctx.signal.aborted) return cancelled(NAME);

    try {
      await writeAtomic(r.realPath, updated, { create: false, singleLink: ctx.sandbox !== 'full-access', ops: options.writeOps, root: r.root });
    } catch (e) {
      if (isHardLinkError(e)) return fail('OUTSIDE_WORKSPACE', `${NAME}: ${hardLinkRefusal(shown, e.nlink)}`);
      if (isPathChanged(e)) return fail('OUTSIDE_WORKSPACE', pathChangedRefusal(NAME, shown, e, true));
      return fail('IO_ERROR', `${NAME}: cannot write '${shown}': ${describeIoError(e)}; '${shown}' was left as it was`);
    }
    const where = lines.length === 1 ? `line ${lines[0]}` : `lines ${lines.slice(0, MAX_LISTED).join(', ')}${lines.length > MAX_LISTED ? ', …' : ''}`;
    return ok(`Edited ${shown}: replaced ${at.length} occurrence${at.length === 1 ? '' : 's'} (${where}).`);
  };

  return {
    name: NAME,
    pathArguments: ['path'],
    description:
      'Replace exact text in an existing file of the workspace. oldText must match the file exactly (whitespace and ' +
      "indentation included, without read_file's line-number prefixes) and, unless replaceAll is true, exactly once.",
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'the file path, relative to the workspace root (or absolute)' },
        oldText: { type: 'string', description: 'the exact text to replace; include enough surrounding lines to make it unique' },
        newText: { type: 'string', description: 'the text to put in its place' },
        replaceAll: { type: 'boolean', description: 'replace every occurrence instead of requiring exactly one (default false)' },
      },
      required: ['path', 'oldText', 'newText'],
      additionalProperties: false,
    },
    execute: (args, ctx) =>
      guard(NAME, ctx.signal, async (): Promise<ToolResult> => {
        const oldText = args.oldText as string;
        const newText = args.newText as string;
        if (oldText === '') {
          return fail('INVALID_ARGUMENTS', `${NAME}: 'oldText' is empty; give the exact text to replace (use write_file to create or rewrite a whole file)`);
        }
        if (oldText === newText) return fail('INVALID_ARGUMENTS', `${NAME}: 'oldText' and 'newText' are identical; there is nothing to change`);

        const r = await resolveForWrite(ctx, args.path);
        if (!r.ok) return fail(r.code, `${NAME}: ${r.message}`);
        if (r.kind === 'missing') return fail('NOT_FOUND', `${NAME}: '${displayPath(r)}' does not exist; use write_file to create it`);
        return withPathLock(r.realPath, () => edit(r, { oldText, newText, replaceAll: args.replaceAll === true }, ctx));
      }),
  };
}

/** Start offsets of the non-overlapping occurrences of `needle`. */
function occurrences(haystack: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + needle.length)) out.push(i);
  return out;
}

/** 1-based line numbers of ascending offsets, in one pass. */
function linesOf(text: string, offsets: readonly number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let nl = text.indexOf('\n');
  for (const offset of offsets) {
    while (nl >= 0 && nl < offset) {
      line++;
      nl = text.indexOf('\n', nl + 1);
    }
    out.push(line);
  }
  return out;
}
