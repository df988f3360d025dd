import * as path from 'node:path';
import { type ApprovalRequest, decideApproval, describeDenial } from '../policy/approval';
import { makeDirs } from '../store/fsutil';
import { cap, unifiedDiff } from './diff';
import { physicalPath, type ResolvedPath } from './paths';
import { fail, refused } from './result';
import type { ToolContext, ToolResult } from './tool';

/**
 * A protected target needs an explicit allow from the approval port, in every sandbox
 * mode. Returns the error result to give back when it is not allowed, else undefined.
 */
export async function approveProtectedWrite(
  ctx: ToolContext,
  tool: string,
  target: ResolvedPath,
  /** What will happen, in a few words, e.g. "overwrite .vscode/settings.json (120 bytes)". */
  action: string,
  /** The file's text now (absent: it does not exist yet) and after the write, for the card. */
  change?: { before?: string; after: string },
): Promise<ToolResult | undefined> {
  if (!target.protectedReason) return undefined;
  const summary = `${tool}: ${action}`;
  const answer = await decideApproval(ctx, {
    tool,
    summary,
    reason: `protected path: ${target.protectedReason}`,
    // The real path: a grant covers this file, not another name (a link) for it.
    target: { kind: 'path', path: target.realPath },
    ...(change ? { preview: previewOf(target.relative, change) } : {}),
  });
  if (answer.approved) return undefined;
  return refused(
    `${tool}: '${target.relative}' is a protected path (${target.protectedReason}); ${describeDenial(answer.outcome, answer.reason)}, ` +
      'so nothing was written. Do not try another route to this file; tell the user what you wanted to change and why.',
    { outcome: answer.outcome, summary },
  );
}

function previewOf(name: string, change: { before?: string; after: string }): NonNullable<ApprovalRequest['preview']> {
  if (change.before === undefined) return { kind: 'content', text: cap(change.after) };
  return { kind: 'diff', text: unifiedDiff(change.before, change.after, name) || '(no change: the new content equals the current file)' };
}

/**
 * Create the missing parent directories of a resolved target, then check that the
 * target still resolves to the same real path: a symlink planted meanwhile in a parent
 * would make the write land somewhere else.
 */
export async function prepareParent(tool: string, target: ResolvedPath): Promise<ToolResult | undefined> {
  await makeDirs(path.dirname(target.realPath));
  const again = await physicalPath(target.realPath);
  if (!again.ok || again.path !== target.realPath) {
    return fail('OUTSIDE_WORKSPACE', `${tool}: '${target.relative}' changed while it was being written (a symbolic link appeared); nothing was written`);
  }
  return undefined;
}
