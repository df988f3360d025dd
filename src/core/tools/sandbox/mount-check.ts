import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROTECTED_DIR_NAMES } from '../protected-names';
import { isWithin } from '../real-path';

// What a sandbox's mount table must show before anything runs in it (decision 0103, amended):
// no writable mount reaches a host folder outside the workspace roots. bubblewrap binds each
// pinned folder onto itself (`--bind p p`) by path, following links at both ends; a command
// running meanwhile that swaps such a folder for a link at the right moment (renameat2 with
// RENAME_EXCHANGE, every few ms) makes bubblewrap bind the folder the link points at, writable —
// outside the workspace. No bubblewrap option binds without following links, so the table the
// kernel keeps is checked instead: it names each mount's filesystem and the real path of what
// was bound, whatever path led there. The rule:
//   a mount that is writable and not covered (another mount stacked on it, on its own root) is
//   either a filesystem made for the sandbox (its device is not among the host's mounts, where the line makes one: /tmp,
//   /proc, devpts), one of the device nodes bubblewrap binds (the host's own node, by device and
//   path), or a folder of the host inside a root (or of a host mount inside a root).
// Covered means stacked, never "a later mount at or above its mount point": a mount point is a
// folder, and a command in another sandbox (where it is no mount point) can rename it, or one of
// its parents, out from under the mount that covered it; the outside mount is then in sight at
// the new name, writable, in a sandbox already checked (a resident lives on). mountinfo's mount
// points are those folders' names now, so a rename can also make a mount read as covered.
// A resident's table is read from the host once it said hello (`writableOutside`), before its
// first command; a bubblewrap of its own checks its table itself, in a shell, before the
// command (`shellCheck`), since nothing of the host's runs between its setup and the command.

export interface MountEntry {
  /** The mount's id, and the id of the mount it is on. */
  id: string;
  parent: string;
  /** `major:minor` of the filesystem. */
  dev: string;
  /** The real path, in its filesystem, of what is mounted (a bind's source). */
  root: string;
  /** Where it is mounted. */
  mountPoint: string;
  writable: boolean;
  fstype: string;
}

/** What may be writable: each root as a folder of its filesystem, and the host's devices (anything else is new). */
export interface WritableRule {
  roots: { dev: string; path: string }[];
  hostDevs: string[];
  /** Each device node `--dev` binds, as the host has it: where the sandbox has it, the host's filesystem and path. */
  devices: { mountPoint: string; dev: string; path: string }[];
  /** Where the line makes a new filesystem (`--tmpfs`, `--proc`, `--dev` and its devpts): the only places one may be writable. */
  fresh: string[];
  /**
   * Each protected path the line binds read-only onto itself inside a root (`--ro-bind p p`), as
   * the host has it: the sandbox must have a read-only mount of that very path there. bubblewrap
   * follows a link at both ends, so a protected path swapped for a link as it was bound left the
   * real one writable (decision 0103, amended in session 48). Not the protected folders at a
   * root's top: every sandbox has a mount on each of them (or a stand-in), so no command can swap them.
   */
  protected: { mountPoint: string; dev: string; path: string }[];
}

/**
 * Whether the line `args` binds a folder inside a root writable onto itself (a pinned folder, a
 * guarded folder's entry, a root inside another root): what a command running meanwhile can race,
 * so the sandbox's table must be checked before use. A line without one has nothing to race.
 */
export function bindsInsideRoots(args: readonly string[], roots: readonly string[]): boolean {
  for (let i = 0; i < args.length - 2; i++) {
    if (args[i] === '--bind' && args[i + 1] === args[i + 2] && roots.some((r) => r !== args[i + 1] && isWithin(args[i + 1], r))) return true;
  }
  return protectedBinds(args, roots).length > 0;
}

/** The `--ro-bind p p` of a line with `p` inside a root, but not a protected folder at a root's top (`WritableRule.protected`). */
function protectedBinds(args: readonly string[], roots: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length - 2; i++) {
    const p = args[i + 1];
    if (args[i] !== '--ro-bind' || p !== args[i + 2] || !roots.some((r) => r !== p && isWithin(p, r))) continue;
    if (roots.includes(path.dirname(p)) && PROTECTED_DIR_NAMES.includes(path.basename(p))) continue;
    out.push(p);
  }
  return out;
}

/** The mount points where a bubblewrap line makes a filesystem of its own. */
function freshMountPoints(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length - 1; i++) {
    if (args[i] === '--tmpfs' || args[i] === '--proc') out.push(args[i + 1]);
    else if (args[i] === '--dev') out.push(args[i + 1], `${args[i + 1]}/pts`);
  }
  return out;
}

/** The device nodes `--dev` binds from the host's /dev, writable. */
const DEVICE_NODES = ['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom', '/dev/tty'];

/** mountinfo's escapes (space, tab, newline, backslash as `\ooo`) undone. */
const unescapeField = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));

/** The lines of a mountinfo file, in the order the mounts were made. */
export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const f = line.split(' ');
    const dash = f.indexOf('-', 6);
    if (f.length < 7 || dash < 0) continue;
    out.push({
      id: f[0],
      parent: f[1],
      dev: f[2],
      root: unescapeField(f[3]),
      mountPoint: unescapeField(f[4]),
      writable: f[5].split(',').includes('rw'),
      fstype: f[dash + 1] ?? '',
    });
  }
  return out;
}

/** The rule for `roots` (real paths) under the bubblewrap line `args`, from the host's own mount table. */
export function writableRule(roots: readonly string[], args: readonly string[], hostMountinfo = fs.readFileSync('/proc/self/mountinfo', 'utf8')): WritableRule {
  const host = parseMountinfo(hostMountinfo);
  const rule: WritableRule = { roots: [], hostDevs: [...new Set(host.map((m) => m.dev))], devices: [], fresh: freshMountPoints(args), protected: [] };
  // The filesystem a host path is on and its path there: the last mount made at the longest mount point above it.
  const locate = (r: string): { dev: string; path: string } | undefined => {
    let best: MountEntry | undefined;
    for (const m of host) if (isWithin(r, m.mountPoint) && (!best || m.mountPoint.length >= best.mountPoint.length)) best = m;
    if (!best) return undefined;
    const rest = best.mountPoint === '/' ? r : r.slice(best.mountPoint.length);
    return { dev: best.dev, path: `${best.root === '/' ? '' : best.root}${rest}` || '/' };
  };
  for (const r of roots) {
    const at = locate(r);
    if (at) rule.roots.push(at);
    // A host mount inside a root comes in with the root's bind (recursive), writable: its filesystem there is the workspace's too.
    for (const m of host) if (m.mountPoint !== r && isWithin(m.mountPoint, r)) rule.roots.push({ dev: m.dev, path: m.root });
  }
  for (const d of DEVICE_NODES) {
    const at = locate(d);
    if (at) rule.devices.push({ mountPoint: d, ...at });
  }
  for (const p of protectedBinds(args, roots)) {
    const at = locate(p);
    if (at) rule.protected.push({ mountPoint: p, ...at });
  }
  return rule;
}

/** The first writable, visible mount that reaches outside the roots, said in words; undefined when there is none. */
export function writableOutside(mountinfo: string, rule: WritableRule): string | undefined {
  const table = parseMountinfo(mountinfo);
  const hostDevs = new Set(rule.hostDevs);
  for (const m of table) {
    if (!m.writable) continue;
    // A filesystem none of the host's mounts has: made for the sandbox, where its line makes one
    // (elsewhere it could be another namespace's, reached through /proc/<pid>/root by a raced link).
    if (!hostDevs.has(m.dev) && rule.fresh.includes(m.mountPoint)) continue;
    if (rule.devices.some((d) => d.mountPoint === m.mountPoint && d.dev === m.dev && d.path === m.root)) continue;
    if (rule.roots.some((r) => r.dev === m.dev && isWithin(m.root, r.path))) continue;
    // Covered by a mount stacked on it (the host's /dev/shm, rw under the read-only one --ro-bind / / made).
    if (table.some((n) => n.parent === m.id && n.mountPoint === m.mountPoint)) continue;
    return hostDevs.has(m.dev)
      ? `${m.mountPoint} is the host's ${m.root} (device ${m.dev}), writable, outside the workspace`
      : `${m.mountPoint} is a filesystem the sandbox did not make there (device ${m.dev}, ${m.fstype}), writable`;
  }
  // Each protected path: the mount in sight there is that very path, read-only (not a folder a link named).
  for (const p of rule.protected ?? []) {
    const top = table.filter((m) => m.mountPoint === p.mountPoint && !table.some((n) => n.parent === m.id && n.mountPoint === m.mountPoint));
    if (!top.some((m) => !m.writable && m.dev === p.dev && m.root === p.path)) {
      return `${p.mountPoint} is not the protected ${p.path} read-only (what was bound there: ${top.map((m) => `${m.root}${m.writable ? ', writable' : ''}`).join('; ') || 'nothing'})`;
    }
  }
  return undefined;
}

/** A shell word for `s`. */
const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
/** mountinfo's own escapes, to compare with its fields as read. */
const escapeField = (s: string): string => s.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);

/**
 * `writableOutside` as a POSIX shell script over `/proc/self/mountinfo`, run in a bubblewrap of
 * the command's own before the command: it exits 126 naming the mount, else `exec "$@"`.
 */
export function shellCheck(rule: WritableRule): string {
  return [
    'set -f',
    'f=/proc/self/mountinfo',
    `devs=${quote(` ${rule.hostDevs.join(' ')} `)}`,
    'within() { [ "$1" = "$2" ] || [ "$2" = / ] || case "$1" in "$2"/*) true;; *) false;; esac; }',
    'bad=""',
    'while read -r id _ dev root mp opts _; do',
    '  case ",$opts," in *,rw,*) ;; *) continue;; esac',
    `  case "$devs" in *" $dev "*) ;; *) case ${quote(` ${rule.fresh.map(escapeField).join(' ')} `)} in *" $mp "*) continue;; esac;; esac`,
    '  ok=',
    ...rule.devices.map(
      (d) => `  [ "$mp" = ${quote(escapeField(d.mountPoint))} ] && [ "$dev" = ${quote(d.dev)} ] && [ "$root" = ${quote(escapeField(d.path))} ] && ok=1`,
    ),
    ...rule.roots.map((r) => `  [ "$dev" = ${quote(r.dev)} ] && within "$root" ${quote(escapeField(r.path))} && ok=1`),
    '  [ -n "$ok" ] && continue',
    '  bad="$bad $id:$mp"',
    'done < "$f"',
    // Each one left must be covered by a mount stacked on it.
    'for b in $bad; do',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    '  at=${b%%:*}; mp=${b#*:}; covered=',
    '  while read -r _ p _ _ m _; do [ "$p" = "$at" ] && [ "$m" = "$mp" ] && { covered=1; break; }; done < "$f"',
    '  [ -z "$covered" ] && { echo "arbor sandbox: $mp is a folder of the host outside the workspace, writable (a folder of the workspace was swapped for a link while the sandbox was set up); the command did not run" >&2; exit 126; }',
    'done',
    // Each protected path: a read-only mount of that very path there, not covered.
    ...(rule.protected ?? []).flatMap((p) => [
      `want=${quote(escapeField(p.mountPoint))}; ok=`,
      'while read -r id _ dev root mp opts _; do',
      `  [ "$mp" = "$want" ] && [ "$dev" = ${quote(p.dev)} ] && [ "$root" = ${quote(escapeField(p.path))} ] || continue`,
      '  case ",$opts," in *,ro,*) ;; *) continue;; esac',
      '  covered=; while read -r _ q _ _ m _; do [ "$q" = "$id" ] && [ "$m" = "$mp" ] && { covered=1; break; }; done < "$f"',
      '  [ -z "$covered" ] && { ok=1; break; }',
      'done < "$f"',
      `[ -z "$ok" ] && { echo ${quote(`arbor sandbox: ${p.mountPoint} is not the protected folder read-only (it was swapped for a link while the sandbox was set up); the command did not run`)} >&2; exit 126; }`,
    ]),
    'exec "$@"',
  ].join('\n');
}
