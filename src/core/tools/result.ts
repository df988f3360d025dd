import { describeError } from '../errors';
import type { Refusal } from '../session/events';
import type { ToolErrorCode, ToolResult } from './tool';

export function ok(content: string): ToolResult {
  return { content, isError: false };
}

export function fail(code: ToolErrorCode, content: string): ToolResult {
  return { content, isError: true, code };
}

/** An action refused for want of approval: the error the model reads, plus the machine-readable mark hosts count. */
export function refused(content: string, refusal: Refusal): ToolResult {
  return { content, isError: true, code: 'APPROVAL_DENIED', refusal };
}

/** The result for a call that was cancelled (before it started, or while it ran). */
export function cancelled(tool: string): ToolResult {
  return fail('CANCELLED', `${tool}: cancelled: the turn was interrupted before the call finished`);
}

/**
 * Run a tool body so that nothing escapes as a throw: an unexpected error becomes an
 * error result naming the tool (STYLE: failures are values, never a throw across a boundary).
 */
export async function guard(tool: string, signal: AbortSignal, body: () => Promise<ToolResult>): Promise<ToolResult> {
  if (signal.aborted) return cancelled(tool);
  try {
    return await body();
  } catch (err) {
    if (signal.aborted) return cancelled(tool);
    return fail('IO_ERROR', `${tool}: failed: ${describeIoError(err)}`);
  }
}

/** "ENOENT: no such file…" → a short reason without the errno noise when we know it. */
export function describeIoError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a parent of the path is not a directory';
    case 'ELOOP':
      return 'too many levels of symbolic links (or a symbolic link where none may be)';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EROFS':
      return 'the file system is read-only';
  }
  return describeError(err);
}

/** 1536 → "1.5 KB", 1610612736 → "1.5 GB". */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} bytes` : `${v >= 10 ? Math.round(v) : Math.round(v * 10) / 10} ${units[u]}`;
}
