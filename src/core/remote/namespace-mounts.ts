import * as fs from 'node:fs';
import type { SandboxMode } from '../session/events';
import type { RemoteTurnContext } from '../subagent/remote-driver';
import { isWithin } from '../tools/real-path';
import { protectedArgs } from '../tools/sandbox/bwrap-args';
import { protectedMounts } from '../tools/sandbox/protected-mounts';
import { holdShadows } from '../tools/sandbox/shadows';

// What a confined remote program's PID namespace keeps from change (decision 0036, amended s60).
// The namespace binds `/` as it is, and the program's own sandbox (Codex's workspace-write: its
// whole cwd; Claude Code's acceptEdits: no OS sandbox at all) knows nothing of Arbor's protected
// names nor of its store. So the same bubblewrap that makes the namespace also mounts, over `/`,
// what Arbor's own confined commands get (`protectedMounts`, one set of rules): every protected
// path of the child's roots read-only, a read-only stand-in for a missing protected name at a
// root's top, the folders above them pinned; and the session store read-only, except what the
// program must write there (its private temp folder, its own home if the store holds it).

/** Whom a confined program is kept from what. */
export interface ConfineSpec {
  /** The child's roots (a worktree child's worktree) and its cwd: their protected paths are read-only. */
  roots: readonly string[];
  /** The session store: read-only to the program. */
  store?: string;
  /** Folders under the store the program writes (its private temp folder, CODEX_HOME): bound writable again. */
  writable?: readonly string[];
}

/** The mounts bubblewrap adds to a program's namespace, and what ends their stand-ins once the namespace is gone. */
export interface NamespaceMounts {
  args: string[];
  /** Removes the stand-ins the mounts made on the host (the last user of each): call once nothing of the namespace runs; resolves once they are gone. */
  release(): Promise<void>;
}

/** Whether a child in `sandbox` gets the mounts: every confined child; a full-access one writes anywhere anyway. */
export const wantsMounts = (sandbox: SandboxMode): boolean => sandbox !== 'full-access';

function real(p: string): string | undefined {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
}

/**
 * The roots a program confined to `cwd` and `roots` writes: the roots, and `cwd` where it lies
 * outside them all (real paths, each once; one inside another is walked as part of it).
 */
export function confinedRoots(cwd: string, roots: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const r of [...roots, cwd].map(real)) if (r && !out.some((o) => isWithin(r, o))) out.push(r);
  return out.filter((r) => !out.some((o) => o !== r && isWithin(r, o)));
}

/**
 * The mounts, in bubblewrap's order (a later mount covers an earlier one): the store read-only,
 * a root inside it (a worktree) writable again, the protected paths of every root, then the
 * program's own folders under the store writable again (last: the store or `.arbor` above them
 * is read-only by then).
 */
export async function namespaceMounts(spec: ConfineSpec): Promise<NamespaceMounts> {
  const roots = spec.roots;
  const store = spec.store === undefined ? undefined : real(spec.store);
  const mounts = await protectedMounts(roots, store ? [store] : []);
  const args: string[] = [];
  if (store) {
    args.push('--ro-bind', store, store);
    for (const r of roots) if (r !== store && isWithin(r, store)) args.push('--bind', r, r);
  }
  args.push(...protectedArgs(mounts));
  if (store) {
    // A bind copies the host's tree over the mounts made before it: a folder holding a root or a
    // protected path (a home the environment names at `<store>/worktrees`) would re-open them, so it stays read-only.
    const kept = [...roots, ...mounts.readOnly, ...mounts.shadow, ...mounts.guarded.map((g) => g.dir)];
    for (const w of spec.writable ?? []) {
      const p = real(w);
      if (p && p !== store && isWithin(p, store) && !kept.some((k) => isWithin(k, p))) args.push('--bind', p, p);
    }
  }
  // A stand-in another command's end is removing is made again once it is gone (`holdShadows`, decision 0130).
  const release = await holdShadows(mounts.shadow, roots);
  return { args, release };
}

/** The program's own folders its environment names: bound writable again when the store holds them. */
const PROGRAM_HOMES = ['CODEX_HOME', 'CLAUDE_CONFIG_DIR', 'HOME'] as const;

/**
 * What a child in `ctx.sandbox` is kept from (undefined: full-access, nothing): its roots' protected
 * paths, and `store` but for its private temp folder `tmp` and the homes its `env` names there.
 */
export function childConfinement(
  ctx: Pick<RemoteTurnContext, 'cwd' | 'roots' | 'sandbox'>,
  store: string | undefined,
  env: Readonly<Record<string, string>>,
  tmp?: string,
): ConfineSpec | undefined {
  if (!wantsMounts(ctx.sandbox)) return undefined;
  const writable = [...(tmp ? [tmp] : []), ...PROGRAM_HOMES.flatMap((k) => (env[k] ? [env[k]] : []))];
  return { roots: confinedRoots(ctx.cwd, ctx.roots), ...(store ? { store } : {}), writable };
}
