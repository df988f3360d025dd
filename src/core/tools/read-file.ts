import * as readline from 'node:readline';
import { looksBinary, openForRead, readHead } from './fsio';
import { displayPath, resolveForRead } from './paths';
import { cancelled, describeError, fail, guard, ok } from './result';
import type { Tool, ToolResult } from './tool';

export interface ReadFileOptions {
  /** Lines returned by one call (default 2000). */
  maxLines?: number;
  /** Bytes of output returned by one call (default 200 KB). */
  maxBytes?: number;
  /** Characters kept of one long line (default 2000). */
  maxLineLength?: number;
}

const NAME = 'read_file';

export function createReadFileTool(options: ReadFileOptions = {}): Tool {
  const maxLines = options.maxLines ?? 2000;
  const maxBytes = options.maxBytes ?? 200 * 1024;
  const maxLineLength = options.maxLineLength ?? 2000;
  return {
    name: NAME,
    pathArguments: ['path'],
    description:
      'Read a text file of the workspace. Each line comes back prefixed with its 1-based number and a tab ' +
      '(the prefix is not part of the file). Long files are cut at ' +
      `${maxLines} lines; use startLine/endLine to read a range.`,
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'the file path, relative to the workspace root (or absolute)' },
        startLine: { type: 'integer', minimum: 1, description: 'first line to return, 1-based (default 1)' },
        endLine: { type: 'integer', minimum: 1, description: 'last line to return, inclusive (default: the end of the file)' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    execute: (args, ctx) =>
      guard(NAME, ctx.signal, async (): Promise<ToolResult> => {
        const start = (args.startLine as number | undefined) ?? 1;
        const end = args.endLine as number | undefined;
        if (end !== undefined && end < start) {
          return fail('INVALID_ARGUMENTS', `${NAME}: endLine (${end}) is before startLine (${start}); give endLine ≥ startLine`);
        }
        const r = await resolveForRead(ctx, args.path);
        if (!r.ok) return fail(r.code, `${NAME}: ${r.message}`);
        const shown = displayPath(r);
        if (r.kind === 'missing') return fail('NOT_FOUND', `${NAME}: '${shown}' does not exist. Use list_files to see what is there.`);
        if (r.kind === 'directory') return fail('NOT_A_FILE', `${NAME}: '${shown}' is a directory; use list_files to see its contents`);
        if (r.kind === 'other') return fail('NOT_A_FILE', `${NAME}: '${shown}' is not a regular file`);

        let fh;
        try {
          fh = await openForRead(r.realPath);
        } catch (e) {
          return fail('IO_ERROR', `${NAME}: cannot open '${shown}': ${describeError(e)}`);
        }
        const stream = fh.createReadStream({ encoding: 'utf8', start: 0, autoClose: true });
        try {
          const head = await readHead(fh);
          if (looksBinary(head)) {
            const { size } = await fh.stat();
            return fail('BINARY_FILE', `${NAME}: '${shown}' is a binary file (${size} bytes); read_file shows text files only`);
          }

          const out: string[] = [];
          let bytes = 0;
          let total = 0;
          let last = 0; // last line number returned
          let capped: 'lines' | 'bytes' | undefined;
          let longLines = 0;
          const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
          for await (const line of rl) {
            if (ctx.signal.aborted) break;
            total++;
            if (total < start || (end !== undefined && total > end) || capped) continue;
            let text = line;
            if (text.length > maxLineLength) {
              longLines++;
              text = `${text.slice(0, maxLineLength)}… [line cut: ${line.length} characters]`;
            }
            const entry = `${total}\t${text}`;
            const size = Buffer.byteLength(entry) + 1;
            if (out.length >= maxLines) capped = 'lines';
            else if (bytes + size > maxBytes && out.length > 0) capped = 'bytes';
            if (capped) continue;
            out.push(entry);
            bytes += size;
            last = total;
          }
          if (ctx.signal.aborted) return cancelled(NAME);

          if (total === 0) return ok(`(${shown} is empty)`);
          if (start > total) {
            return fail('INVALID_ARGUMENTS', `${NAME}: startLine ${start} is past the end of '${shown}', which has ${total} lines`);
          }
          const notes: string[] = [];
          if (capped) {
            const limit = capped === 'lines' ? `${maxLines} lines` : maxBytes >= 1024 ? `${Math.round(maxBytes / 1024)} KB` : `${maxBytes} bytes`;
            notes.push(
              `[Output cut at ${limit}: showing lines ${start}–${last} of ${total}. ` +
                `Call read_file with startLine: ${last + 1} to read on.]`,
            );
          } else if (start > 1 || last < total) {
            notes.push(`[Lines ${start}–${last} of ${total}.]`);
          }
          if (longLines) notes.push(`[${longLines} long line(s) cut at ${maxLineLength} characters.]`);
          return ok(out.join('\n') + (notes.length ? `\n\n${notes.join('\n')}` : ''));
        } finally {
          stream.destroy();
        }
      }),
  };
}
