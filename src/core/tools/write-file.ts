import * as fsp from 'node:fs/promises';
import { isPathChanged, pathChangedRefusal, pins } from './beneath';
import { countLines, isHardLinkError, looksBinary, readWhole, type WriteOps, writeAtomic } from './fsio';
import { withPathLock } from './path-lock';
import { displayPath, hardLinkRefusal, type ResolvedPath, resolveForWrite } from './paths';
import { PROTECTED_NAMES_TEXT } from './protected-names';
import { cancelled, describeIoError, fail, guard, ok } from './result';
import type { Tool, ToolContext, ToolResult } from './tool';
import { approveProtectedWrite, prepareParent } from './write-guard';

const NAME = 'write_file';

export interface WriteFileOptions {
  /** The file-system calls of the atomic write (tests simulate a full disk with them). */
  writeOps?: WriteOps;
}

export function createWriteFileTool(options: WriteFileOptions = {}): Tool {
  const write = async (r: ResolvedPath, content: string, ctx: ToolContext): Promise<ToolResult> => {
    const shown = displayPath(r);
    // Looked at again under the lock: a write queued before this one may have created it.
    const existed = await isFile(r.realPath);
    const bytes = Buffer.byteLength(content);

    const denied = r.protectedReason
      ? await approveProtectedWrite(ctx, NAME, r, `${existed ? 'overwrite' : 'create'} ${r.relative} (${bytes} bytes)`, {
          before: existed ? await currentText(r) : undefined,
          after: content,
        })
      : undefined;
    if (denied) return denied;
    if (ctx.signal.aborted) return cancelled(NAME);

    try {
      // Pinned (beneath.ts), the folders are made and walked with no symlink followed; else made here and checked again.
      const moved = pins(r.realPath, r.root) ? undefined : await prepareParent(NAME, r);
      if (moved) return moved;
      await writeAtomic(r.realPath, content, {
        create: true,
        singleLink: ctx.sandbox !== 'full-access',
        ops: options.writeOps,
        root: r.root,
        makeParents: true,
      });
    } catch (e) {
      if (isHardLinkError(e)) return fail('OUTSIDE_WORKSPACE', `${NAME}: ${hardLinkRefusal(shown, e.nlink)}`);
      if (isPathChanged(e)) return fail('OUTSIDE_WORKSPACE', pathChangedRefusal(NAME, shown, e, existed));
      const kept = existed ? `'${shown}' was left as it was` : 'nothing was created';
      return fail('IO_ERROR', `${NAME}: cannot write '${shown}': ${describeIoError(e)}; ${kept}`);
    }
    return ok(`${existed ? 'Overwrote' : 'Created'} ${shown} (${bytes} bytes, ${countLines(content)} lines).`);
  };

  return {
    name: NAME,
    pathArguments: ['path'],
    description:
      'Create or overwrite a text file in the workspace with the given content, creating missing parent directories. ' +
      `To change part of an existing file prefer edit_file. Protected paths (${PROTECTED_NAMES_TEXT}) need the user's approval.`,
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
        const r = await resolveForWrite(ctx, args.path);
        if (!r.ok) return fail(r.code, `${NAME}: ${r.message}`);
        // Held from the approval to the rename: another agent's write to this file waits its turn.
        return withPathLock(r.realPath, () => write(r, args.content as string, ctx));
      }),
  };
}

async function isFile(realPath: string): Promise<boolean> {
  try {
    return (await fsp.lstat(realPath)).isFile();
  } catch {
    return false;
  }
}

/** The file's text for a diff; a binary or unreadable file is shown as a placeholder line. */
async function currentText(r: ResolvedPath): Promise<string> {
  try {
    const buf = await readWhole(r.realPath, r.root);
    return looksBinary(buf) ? '(binary file)\n' : buf.toString('utf8');
  } catch {
    return '(unreadable)\n';
  }
}
