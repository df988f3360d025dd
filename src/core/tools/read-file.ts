import { looksBinary, openForRead, readHead } from './fsio';
import { LineReader, type Stop } from './line-reader';
import { displayPath, resolveForRead } from './paths';
import { cancelled, describeIoError, fail, formatBytes, guard, ok } from './result';
import type { Tool, ToolResult } from './tool';

export interface ReadFileOptions {
  /** Lines returned by one call (default 2000). */
  maxLines?: number;
  /** Bytes of output returned by one call (default 200 KB). */
  maxBytes?: number;
  /** Characters kept of one long line (default 2000). */
  maxLineLength?: number;
  /** Bytes of the file one call reads at most, skipped lines included (default 256 MiB). */
  maxScanBytes?: number;
  /** Files up to this size are read to the end to count their lines (default 16 MiB); larger ones are not. */
  countBytes?: number;
}

const DEFAULT_SCAN_BYTES = 256 * 1024 * 1024;
const DEFAULT_COUNT_BYTES = 16 * 1024 * 1024;

const NAME = 'read_file';

export function createReadFileTool(options: ReadFileOptions = {}): Tool {
  const maxLines = options.maxLines ?? 2000;
  const maxBytes = options.maxBytes ?? 200 * 1024;
  const maxLineLength = options.maxLineLength ?? 2000;
  const maxScanBytes = options.maxScanBytes ?? DEFAULT_SCAN_BYTES;
  const countBytes = options.countBytes ?? DEFAULT_COUNT_BYTES;

  // Reads only as far as it must: to startLine, through the lines it returns, then on to
  // the end to count the lines only when the file is small enough for that to be cheap.
  const readLines = async (reader: LineReader, at: { shown: string; size: number; start: number; end?: number }): Promise<ToolResult> => {
    const { shown, size, start, end } = at;
    const tooFar = (where: string): ToolResult =>
      fail(
        'TOO_LARGE',
        `${NAME}: stopped after reading ${formatBytes(reader.scanned)} of '${shown}' (${formatBytes(size)}) ${where}; ` +
          "read_file reads at most that much per call. Use run_command (e.g. sed -n 'N,Mp', tail, head -c) for far parts of huge files.",
      );
    while (reader.lines < start - 1) {
      const s = await reader.skipLine();
      if (s === true) continue;
      if (s === 'aborted') return cancelled(NAME);
      if (s === 'limit') return tooFar(`before reaching line ${start}`);
      if (reader.lines === 0) return ok(`(${shown} is empty)`);
      return fail('INVALID_ARGUMENTS', `${NAME}: startLine ${start} is past the end of '${shown}', which has ${reader.lines} lines`);
    }

    const out: string[] = [];
    let bytes = 0;
    let capped: 'lines' | 'bytes' | 'scan' | undefined;
    let ended = false; // the end of the file was reached
    let longLines = 0;
    while (end === undefined || reader.lines < end) {
      const line = await reader.readLine(maxLineLength);
      if (line === 'aborted') return cancelled(NAME);
      if (line === 'eof') {
        ended = true;
        break;
      }
      if (line === 'limit') {
        capped = 'scan';
        break;
      }
      let text = line.text;
      if (line.chars === undefined || line.chars > maxLineLength || !line.complete) {
        longLines++;
        const length =
          line.chars !== undefined && line.complete ? `${line.chars} characters` : `${line.complete ? '' : 'more than '}${formatBytes(line.bytes)}`;
        text = `${text.slice(0, maxLineLength)}… [line cut: ${length}]`;
      }
      const entry = `${reader.lines}\t${text}`;
      const entrySize = Buffer.byteLength(entry) + 1;
      if (out.length >= maxLines) capped = 'lines';
      else if (bytes + entrySize > maxBytes && out.length > 0) capped = 'bytes';
      if (capped) break;
      out.push(entry);
      bytes += entrySize;
      if (!line.complete) {
        capped = 'scan';
        break;
      }
    }
    if (out.length === 0 && capped === 'scan') return tooFar(`inside line ${start}`);
    const last = start + out.length - 1;
    if (out.length === 0 && ended) {
      if (reader.lines === 0) return ok(`(${shown} is empty)`);
      return fail('INVALID_ARGUMENTS', `${NAME}: startLine ${start} is past the end of '${shown}', which has ${reader.lines} lines`);
    }

    // The total, when the rest is small enough to count; else the note gives the size.
    let total: number | undefined = ended ? reader.lines : undefined;
    if (total === undefined && capped !== 'scan' && size <= countBytes) {
      let s: true | Stop;
      while ((s = await reader.skipLine()) === true);
      if (s === 'aborted') return cancelled(NAME);
      if (s === 'eof') total = reader.lines;
    }
    const of = total !== undefined ? `of ${total}` : `of a ${formatBytes(size)} file (its lines were not counted)`;
    const notes: string[] = [];
    if (capped === 'scan') {
      notes.push(
        `[Stopped after reading ${formatBytes(reader.scanned)} of '${shown}' (${formatBytes(size)}): showing lines ${start}–${last}. ` +
          'Use run_command (e.g. sed -n, tail) for far parts of huge files.]',
      );
    } else if (capped) {
      const limit = capped === 'lines' ? `${maxLines} lines` : maxBytes >= 1024 ? `${Math.round(maxBytes / 1024)} KB` : `${maxBytes} bytes`;
      notes.push(`[Output cut at ${limit}: showing lines ${start}–${last} ${of}. Call read_file with startLine: ${last + 1} to read on.]`);
    } else if (total === undefined) {
      notes.push(`[Lines ${start}–${last} ${of}. Call read_file with startLine: ${last + 1} to read on.]`);
    } else if (start > 1 || last < total) {
      notes.push(`[Lines ${start}–${last} of ${total}.]`);
    }
    if (longLines) notes.push(`[${longLines} long line(s) cut at ${maxLineLength} characters.]`);
    return ok(out.join('\n') + (notes.length ? `\n\n${notes.join('\n')}` : ''));
  };

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

        let fh: Awaited<ReturnType<typeof openForRead>>;
        try {
          fh = await openForRead(r.realPath, r.root);
        } catch (e) {
          return fail('IO_ERROR', `${NAME}: cannot open '${shown}': ${describeIoError(e)}`);
        }
        try {
          const head = await readHead(fh);
          const { size } = await fh.stat();
          if (looksBinary(head)) return fail('BINARY_FILE', `${NAME}: '${shown}' is a binary file (${size} bytes); read_file shows text files only`);
          return await readLines(new LineReader(fh, maxScanBytes, ctx.signal), { shown, size, start, end });
        } finally {
          await fh.close();
        }
      }),
  };
}
