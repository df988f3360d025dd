import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { pathKey } from './path-lock';
import { protectionOf } from './protected-paths';
import { isWithin, physicalPath } from './real-path';

export { protectedReason } from './protected-paths';
export { isWithin, physicalPath } from './real-path';

import type { ToolContext, ToolErrorCode } from './tool';

// Workspace path resolution on the real file system (DESIGN §6). Every path a file tool
// touches goes through here; the tools then act on `realPath`, never on what the model
// typed, so the check and the action see the same file.

export type PathContext = Pick<ToolContext, 'roots' | 'sandbox' | 'protectedPaths'>;

export type PathKind = 'file' | 'directory' | 'other' | 'missing';

export interface ResolvedPath {
  ok: true;
  /** Absolute, symlink-free path (as of resolution) that the tool must act on. */
  realPath: string;
  /** The real workspace root holding `realPath`; absent when it lies outside every root (full-access only). */
  root?: string;
  /** `realPath` relative to `root` with `/` separators (`.` for the root itself); `realPath` when outside. */
  relative: string;
  kind: PathKind;
  /** Set by `resolveForWrite` when the target is a protected path: the write needs approval. */
  protectedReason?: string;
}

export interface PathError {
  ok: false;
  code: ToolErrorCode;
  message: string;
}

export type PathResolution = ResolvedPath | PathError;

const MAX_PATH_LENGTH = 4096;

function err(code: ToolErrorCode, message: string): PathError {
  return { ok: false, code, message };
}

/** Resolve a path the model wants to read (or list, search, run in). */
export async function resolveForRead(ctx: PathContext, p: unknown): Promise<PathResolution> {
  const r = await resolve(ctx, p);
  if (!r.ok) return r;
  if (!r.root && ctx.sandbox !== 'full-access') {
    return err(
      'OUTSIDE_WORKSPACE',
      `${show(p)} resolves to ${r.realPath}, outside the workspace (${rootList(ctx)}); ` +
        `the sandbox (${ctx.sandbox}) allows reading only inside the workspace. Use a path inside it.`,
    );
  }
  return r;
}

/**
 * Resolve a path the model wants to write. Refuses every write in `read-only` and any
 * real target outside the roots in `workspace-write`; marks protected targets (which
 * need approval in every mode) with `protectedReason`.
 */
export async function resolveForWrite(ctx: PathContext, p: unknown): Promise<PathResolution> {
  if (ctx.sandbox === 'read-only') {
    return err(
      'READ_ONLY',
      `the sandbox is read-only, so no file may be written (${show(p)} was not changed). ` +
        'Tell the user what you would change; they can switch the sandbox to workspace-write.',
    );
  }
  if (typeof p === 'string' && /[\\/]$/.test(p) && p.length > 1) {
    return err('INVALID_PATH', `${show(p)} ends with a slash, which names a directory; give the path of a file`);
  }
  const r = await resolve(ctx, p);
  if (!r.ok) return r;
  if (!r.root && ctx.sandbox !== 'full-access') {
    return err(
      'OUTSIDE_WORKSPACE',
      `${show(p)} resolves to ${r.realPath}, outside the workspace (${rootList(ctx)}); ` +
        `the sandbox (${ctx.sandbox}) allows writing only inside the workspace, so nothing was written.`,
    );
  }
  if (r.kind === 'directory') {
    return err('NOT_A_FILE', `${show(p)} is a directory (${r.relative}); give the path of a file`);
  }
  if (r.kind === 'other') {
    return err('NOT_A_FILE', `${show(p)} is not a regular file (a device, pipe or socket); only regular files can be written`);
  }
  if (r.kind === 'file' && ctx.sandbox !== 'full-access') {
    const linked = await hardLinkCount(r.realPath);
    if (linked > 1) return err('OUTSIDE_WORKSPACE', hardLinkRefusal(show(p), linked));
  }
  const reason = await protectionOf(ctx, r);
  return reason ? { ...r, protectedReason: reason } : r;
}

/**
 * The real file a path argument names, as a key two names of one file share (symlinks,
 * `..` and `./` resolved; case folded where the file system folds it), whatever the sandbox
 * would say of it; undefined when it names nothing resolvable.
 */
export async function fileKey(ctx: PathContext, p: unknown): Promise<string | undefined> {
  const r = await resolve(ctx, p);
  return r.ok ? pathKey(r.realPath) : undefined;
}

async function resolve(ctx: PathContext, p: unknown): Promise<PathResolution> {
  if (typeof p !== 'string') return err('INVALID_PATH', `the path must be a string, got ${typeof p}`);
  if (p === '') return err('INVALID_PATH', 'the path is empty; give a path relative to the workspace root, or "." for the root');
  if (p.includes('\0')) return err('INVALID_PATH', `${show(p)} contains a NUL byte, which no file name may hold`);
  if (p.length > MAX_PATH_LENGTH) return err('INVALID_PATH', `the path is longer than ${MAX_PATH_LENGTH} characters`);
  if (p === '~' || p.startsWith('~/') || p.startsWith('~\\')) {
    return err('INVALID_PATH', `${show(p)}: '~' is not expanded; give a path relative to the workspace root, or an absolute path`);
  }
  if (process.platform === 'win32' && /:/.test(p.slice(path.win32.parse(p).root.length))) {
    return err('INVALID_PATH', `${show(p)} contains ':' (an alternate data stream); give a plain file path`);
  }

  const roots = await realRoots(ctx.roots);
  let absolute: string;
  if (path.isAbsolute(p)) {
    absolute = p;
  } else {
    if (roots.length === 0) return err('INVALID_PATH', `no workspace folder is open, so ${show(p)} cannot be resolved; give an absolute path`);
    // Joined as text, not with path.join: `..` must be resolved against real directories
    // (after following symlinks), not lexically.
    absolute = roots[0] + path.sep + p;
  }
  const physical = await physicalPath(absolute);
  if (!physical.ok) return err('INVALID_PATH', `${show(p)}: ${physical.message}`);
  const realPath = physical.path;

  const root = containingRoot(realPath, roots);
  const relative = root ? toPosix(path.relative(root, realPath)) || '.' : realPath;
  return { ok: true, realPath, root, relative, kind: await kindOf(realPath) };
}

/** The real paths of the roots; a root that does not exist is kept as given (resolved). */
async function realRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of roots) {
    const abs = path.resolve(r);
    const real = await physicalPath(abs);
    out.push(real.ok ? real.path : abs);
  }
  return out;
}

/** The deepest root holding `target` (roots may nest). */
function containingRoot(target: string, roots: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const r of roots) if (isWithin(target, r) && (!best || r.length > best.length)) best = r;
  return best;
}

async function kindOf(p: string): Promise<PathKind> {
  try {
    const st = await fsp.stat(p);
    return st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other';
  } catch {
    return 'missing';
  }
}

export function toPosix(p: string): string {
  return path.sep === '/' ? p : p.split(path.sep).join('/');
}

/** How the workspace-relative path of a resolved target reads in messages. */
export function displayPath(r: ResolvedPath): string {
  return r.root ? r.relative : r.realPath;
}

function show(p: unknown): string {
  const s = typeof p === 'string' ? p.replace(/\0/g, '\\0') : String(p);
  return `'${s.length > 200 ? `${s.slice(0, 200)}…` : s}'`;
}

function rootList(ctx: PathContext): string {
  return ctx.roots.length ? ctx.roots.join(', ') : 'no folder open';
}

/** Hard links to a file (1 when it has no other name, 0 when it cannot be read). */
async function hardLinkCount(realPath: string): Promise<number> {
  try {
    return (await fsp.lstat(realPath)).nlink;
  } catch {
    return 0;
  }
}

/**
 * A hard link is another name for the same bytes, and its other names may lie outside the
 * workspace (a link made to ~/.bashrc): nothing in the path says where, so the sandbox
 * treats a file with several links like a symlink escape and refuses to write through it.
 */
export function hardLinkRefusal(shown: string, links: number): string {
  return (
    `${shown} is a hard link (the file has ${links} names, and the others may lie outside the workspace), ` +
    'so writing it could change a file outside the workspace; nothing was written. ' +
    'Write a new file instead, or ask the user to break the link (copy the file over itself: cp f f.tmp && mv f.tmp f).'
  );
}
