import type { Stats } from 'node:fs';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';

// The real path of a file and containment, on the real file system: the ground every path
// check of the tools stands on (paths.ts for the sandbox, protected-paths.ts for approvals).

/** Symlinks followed while resolving one path before giving up (Linux uses 40 for ELOOP). */
const MAX_SYMLINKS = 40;

export const CASE_INSENSITIVE_FS = process.platform === 'win32' || process.platform === 'darwin';

export function isWithin(target: string, dir: string): boolean {
  const t = CASE_INSENSITIVE_FS ? target.toLowerCase() : target;
  const d = CASE_INSENSITIVE_FS ? dir.toLowerCase() : dir;
  if (t === d) return true;
  return t.startsWith(d.endsWith(path.sep) ? d : d + path.sep);
}

/** What a resolution passed on its way: each symlink followed and each existing folder entered (the ones `..` left too), in order; each in a real folder. */
export interface PhysicalWay {
  links: string[];
  dirs: string[];
  /** With it: each entry passed that is neither a folder nor a link (missing, or a file), in order. */
  notDirs?: string[];
}

type Resolved = { ok: true; path: string } | { ok: false; message: string };

/**
 * The path the kernel would reach, component by component: `.` dropped, `..` climbs
 * the real parent, every symlink (dangling ones too) is replaced by its target, and
 * components that do not exist yet are appended as they are. So a dangling link to
 * `/tmp/outside.txt` resolves to `/tmp/outside.txt`, which a create would have made.
 * With `way`, also what it passed (the sandbox keeps the links on `$HOME`'s way in place).
 */
export async function physicalPath(absolute: string, way?: PhysicalWay): Promise<Resolved> {
  const steps = resolving(absolute, way);
  let step = steps.next();
  while (!step.done) step = steps.next(await foundAt(step.value));
  return step.value;
}

/** `physicalPath` without a hop through libuv's thread pool per component, for the sandbox's synchronous reads (`sandbox/protected-mounts.ts`). */
export function physicalPathSync(absolute: string, way?: PhysicalWay): Resolved {
  const steps = resolving(absolute, way);
  let step = steps.next();
  while (!step.done) step = steps.next(foundAtSync(step.value));
  return step.value;
}

/** What is at a path, as the walk needs it: a link's target, whether it is a folder (false: missing too), or why a link cannot be read. */
type Found = { link: string } | { dir: boolean } | { error: string };

/** The walk itself: yields each path it must look at, and is told what is there. */
function* resolving(absolute: string, way: PhysicalWay | undefined): Generator<string, Resolved, Found> {
  const parsed = path.parse(absolute);
  let current = parsed.root;
  const pending = split(absolute.slice(parsed.root.length));
  let links = 0;
  while (pending.length) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    const found = yield next;
    if ('dir' in found) {
      // Missing (or unreadable): nothing to follow; a create would make it right here.
      if (found.dir) way?.dirs.push(next);
      else way?.notDirs?.push(next);
      current = next;
      continue;
    }
    way?.links.push(next);
    if (++links > MAX_SYMLINKS) return { ok: false, message: `too many symbolic links (more than ${MAX_SYMLINKS}; a loop?)` };
    if ('error' in found) return { ok: false, message: found.error };
    const target = found.link;
    if (path.isAbsolute(target)) {
      const t = path.parse(target);
      current = t.root;
      pending.unshift(...split(target.slice(t.root.length)));
    } else {
      pending.unshift(...split(target));
    }
  }
  return { ok: true, path: current };
}

async function foundAt(p: string): Promise<Found> {
  let st: Stats;
  try {
    st = await fsp.lstat(p);
  } catch {
    return { dir: false };
  }
  if (!st.isSymbolicLink()) return { dir: st.isDirectory() };
  try {
    return { link: await fsp.readlink(p) };
  } catch (e) {
    return { error: `cannot read the symbolic link ${p}: ${(e as Error).message}` };
  }
}

function foundAtSync(p: string): Found {
  let st: Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return { dir: false };
  }
  if (!st.isSymbolicLink()) return { dir: st.isDirectory() };
  try {
    return { link: fs.readlinkSync(p) };
  } catch (e) {
    return { error: `cannot read the symbolic link ${p}: ${(e as Error).message}` };
  }
}

function split(rest: string): string[] {
  return rest.split(process.platform === 'win32' ? /[\\/]/ : '/');
}
