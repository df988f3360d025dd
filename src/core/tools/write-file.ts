import { countLines, isHardLinkError, looksBinary, readWhole, writeWhole } from './fsio';
import { displayPath, hardLinkRefusal, resolveForWrite } from './paths';
import { cancelled, describeError, fail, guard, ok } from './result';
import type { Tool, ToolResult } from './tool';
import { approveProtectedWrite, prepareParent } from './write-guard';

const NAME = 'write_file';

export function createWriteFileTool(): Tool {
  return {
    name: NAME,
    description:
      'Create or overwrite a text file in the workspace with the given content, creating missing parent directories. ' +
      'To change part of an existing file prefer edit_file. Protected paths (.git, .vscode, .arbor, *.code-workspace) need the user\'s approval.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'the file path, relative to the workspace root (or absolute)' },
        content: { type: 'string', description: 'the complete new content of the file' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    execute: (args, ctx) =>
      guard(NAME, ctx.signal, async (): Promise<ToolResult> => {
        const content = args.content as string;
        const r = await resolveForWrite(ctx, args.path);
        if (!r.ok) return fail(r.code, `${NAME}: ${r.message}`);
        const shown = displayPath(r);
        const existed = r.kind === 'file';
        const bytes = Buffer.byteLength(content);

        const denied = r.protectedReason
          ? await approveProtectedWrite(ctx, NAME, r, `${existed ? 'overwrite' : 'create'} ${r.relative} (${bytes} bytes)`, {
              before: existed ? await currentText(r.realPath) : undefined,
              after: content,
            })
          : undefined;
        if (denied) return denied;
        if (ctx.signal.aborted) return cancelled(NAME);

        try {
          const moved = await prepareParent(NAME, r);
          if (moved) return moved;
          await writeWhole(r.realPath, content, true, ctx.sandbox !== 'full-access');
        } catch (e) {
          if (isHardLinkError(e)) return fail('OUTSIDE_WORKSPACE', `${NAME}: ${hardLinkRefusal(shown, e.nlink)}`);
          return fail('IO_ERROR', `${NAME}: cannot write '${shown}': ${describeError(e)}`);
        }
        return ok(`${existed ? 'Overwrote' : 'Created'} ${shown} (${bytes} bytes, ${countLines(content)} lines).`);
      }),
  };
}

/** The file's text for a diff; a binary or unreadable file is shown as a placeholder line. */
async function currentText(realPath: string): Promise<string> {
  try {
    const buf = await readWhole(realPath);
    return looksBinary(buf) ? '(binary file)\n' : buf.toString('utf8');
  } catch {
    return '(unreadable)\n';
  }
}
