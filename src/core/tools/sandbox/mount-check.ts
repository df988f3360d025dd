import * as fs from 'node:fs';
import { isWithin } from '../real-path';

// What a sandbox's mount table must show before anything runs in it (decision 0103, amended):
// no writable mount reaches a host folder outside the workspace roots. bubblewrap binds each
// pinned folder onto itself (`--bind p p`) by path, following links at both ends; a command
// running meanwhile that swaps such a folder for a link at the right moment (renameat2 with
// RENAME_EXCHANGE, every few ms) makes bubblewrap bind the folder the link points at, writable —
// outside the workspace. No bubblewrap option binds without following links, so the table the
// kernel keeps is checked instead: it names each mount's filesystem and the real path of what
// was bound, whatever path led there. The rule:
//   a mount that is writable and visible (no later mount covers its mount point) is either a
//   filesystem made for the sandbox (its device is not among the host's mounts: /tmp, /proc,
//   devpts), one of the device nodes bubblewrap binds, or a folder of the host inside a root.
// A resident's table is read from the host once it said hello (`writableOutside`), before its
// first command; a bubblewrap of its own checks its table itself, in a shell, before the
// command (`shellCheck`), since nothing of the host's runs between its setup and the command.

export interface MountEntry {
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
    out.push({ dev: f[2], root: unescapeField(f[3]), mountPoint: unescapeField(f[4]), writable: f[5].split(',').includes('rw'), fstype: f[dash + 1] ?? '' });
  }
  return out;
}

/** The rule for `roots` (real paths), from the host's own mount table. */
export function writableRule(roots: readonly string[], hostMountinfo = fs.readFileSync('/proc/self/mountinfo', 'utf8')): WritableRule {
  const host = parseMountinfo(hostMountinfo);
  const rule: WritableRule = { roots: [], hostDevs: [...new Set(host.map((m) => m.dev))] };
  for (const r of roots) {
    // The mount the root is on: the last made at the longest mount point above it.
    let best: MountEntry | undefined;
    for (const m of host) if (isWithin(r, m.mountPoint) && (!best || m.mountPoint.length >= best.mountPoint.length)) best = m;
    if (!best) continue;
    const rest = best.mountPoint === '/' ? r : r.slice(best.mountPoint.length);
    const p = `${best.root === '/' ? '' : best.root}${rest}` || '/';
    rule.roots.push({ dev: best.dev, path: p });
  }
  return rule;
}

/** The first writable, visible mount that reaches outside the roots, said in words; undefined when there is none. */
export function writableOutside(mountinfo: string, rule: WritableRule): string | undefined {
  const table = parseMountinfo(mountinfo);
  const hostDevs = new Set(rule.hostDevs);
  for (let i = 0; i < table.length; i++) {
    const m = table[i];
    if (!m.writable || !hostDevs.has(m.dev)) continue;
    if (m.fstype === 'devtmpfs' && DEVICE_NODES.includes(m.mountPoint)) continue;
    if (rule.roots.some((r) => r.dev === m.dev && isWithin(m.root, r.path))) continue;
    // Covered by a mount made after it at or above its mount point (the host's /dev/shm under --dev /dev).
    if (table.slice(i + 1).some((n) => isWithin(m.mountPoint, n.mountPoint))) continue;
    return `${m.mountPoint} is the host's ${m.root} (device ${m.dev}), writable, outside the workspace`;
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
    'n=0; bad=""',
    'while read -r _ _ dev root mp opts _; do',
    '  n=$((n+1))',
    '  case ",$opts," in *,rw,*) ;; *) continue;; esac',
    '  case "$devs" in *" $dev "*) ;; *) continue;; esac',
    `  case "$mp" in ${DEVICE_NODES.join('|')}) continue;; esac`,
    '  ok=',
    ...rule.roots.map((r) => `  [ "$dev" = ${quote(r.dev)} ] && within "$root" ${quote(escapeField(r.path))} && ok=1`),
    '  [ -n "$ok" ] && continue',
    '  bad="$bad $n:$mp"',
    'done < "$f"',
    // Each one left must be covered by a later mount at or above its mount point.
    'for b in $bad; do',
    '  at=${b%%:*}; mp=${b#*:}; i=0; covered=',
    '  while read -r _ _ _ _ m _; do i=$((i+1)); [ $i -gt $at ] && within "$mp" "$m" && { covered=1; break; }; done < "$f"',
    '  [ -z "$covered" ] && { echo "arbor sandbox: $mp is a folder of the host outside the workspace, writable (a folder of the workspace was swapped for a link while the sandbox was set up); the command did not run" >&2; exit 126; }',
    'done',
    'exec "$@"',
  ].join('\n');
}
