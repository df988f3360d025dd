import * as fs from 'node:fs';
import * as path from 'node:path';
import { changedWhileRead, openInside, realOr } from './within-root';

/**
 * Project instructions (issue 23.2): `AGENTS.md` at each level from the workspace root down
 * to the working folder (`CLAUDE.md` where a level has none), after the user's own file. The
 * agents.md convention says the nearest file wins a conflict: we concatenate farthest first,
 * nearest last, and say so in the prompt. The whole is capped; the cut is stated.
 */

export interface InstructionFile {
  /** Absolute path. */
  path: string;
  /** What the prompt and the panel call it: workspace-relative, or "user". */
  shown: string;
  level: 'user' | 'workspace';
  /** Bytes of the file on disk. */
  bytes: number;
  /** Bytes of it in the prompt (less than `bytes` when the cap cut it). */
  included: number;
}

export interface InstructionsSource {
  root: string;
  /** The folder the task is about (inside root); default the root. */
  cwd?: string;
  /** The user-level file (e.g. ~/.arbor/AGENTS.md); none when absent. */
  userFile?: string;
  maxBytes: number;
  /**
   * Every instruction file a level has (`AGENTS.md`, then `CLAUDE.md`; one that is the same file
   * as the other read once), not only the first: what a confined Claude Code child is given in
   * place of its own reading (decision 0122, amended). Default: the first.
   */
  every?: boolean;
}

export interface Instructions {
  files: InstructionFile[];
  /** Files found but not used, and why (a symlink out of the workspace, unreadable). */
  skipped: { path: string; why: string }[];
  /** The prompt section's text ('' when there are no files). */
  text: string;
  /** Bytes cut by the cap (0: nothing cut). */
  cutBytes: number;
}

export const DEFAULT_INSTRUCTION_BYTES = 32 * 1024;
const NAMES = ['AGENTS.md', 'CLAUDE.md'] as const;

/** The candidate files in order (user, then root → cwd), each level's first name that exists; what a change check stats. */
export function instructionCandidates(src: InstructionsSource): { level: 'user' | 'workspace'; paths: string[] }[] {
  const out: { level: 'user' | 'workspace'; paths: string[] }[] = [];
  if (src.userFile) out.push({ level: 'user', paths: [src.userFile] });
  for (const dir of levels(src.root, src.cwd)) out.push({ level: 'workspace', paths: NAMES.map((n) => path.join(dir, n)) });
  return out;
}

/** The root, then each folder down to cwd (a cwd outside the root counts as the root). */
function levels(root: string, cwd: string | undefined): string[] {
  const rel = cwd ? path.relative(root, cwd) : '';
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return [root];
  const out = [root];
  let cur = root;
  for (const part of rel.split(path.sep)) out.push((cur = path.join(cur, part)));
  return out;
}

export function readInstructions(src: InstructionsSource): Instructions {
  const files: InstructionFile[] = [];
  const skipped: Instructions['skipped'] = [];
  const texts: string[] = [];
  let left = src.maxBytes;
  let cutBytes = 0;
  const realRoot = realOr(src.root);
  const seen = new Set<string>();
  for (const { level, paths } of instructionCandidates(src)) {
    const found = paths.filter((c) => isFile(c));
    for (const p of src.every ? found : found.slice(0, 1)) {
      let data: Buffer;
      let bytes: number;
      let id: string;
      try {
        // A workspace file must really be in the workspace: a symlink to a secret elsewhere is not
        // an instruction, nor is one swapped in after the check (`openInside`).
        const fd = level === 'workspace' ? openInside(realRoot, p) : fs.openSync(p, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
        if (fd === 'outside') {
          skipped.push({ path: p, why: 'it links outside the workspace' });
          continue;
        }
        ({ data, bytes, id } = readUpTo(fd, left));
      } catch (err) {
        const why = changedWhileRead(err)
          ? 'it became a link while it was read (something in the workspace is swapping it), so it was not used'
          : `it could not be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
        skipped.push({ path: p, why });
        continue;
      }
      // A CLAUDE.md that links to the level's AGENTS.md (or is a hard link of it) is read once.
      if (seen.has(id)) continue;
      seen.add(id);
      const shown = level === 'user' ? `user ${path.basename(p)}` : path.relative(src.root, p).split(path.sep).join('/');
      // Cut at a character boundary: drop a partial UTF-8 sequence at the end.
      const body = data.toString('utf8').replace(/\uFFFD$/, '');
      const included = Math.min(bytes, data.length);
      files.push({ path: p, shown, level, bytes, included });
      cutBytes += bytes - included;
      left -= included;
      texts.push(`## ${shown}\n\n${body.trim()}`);
    }
  }
  if (files.length === 0) return { files, skipped, text: '', cutBytes: 0 };
  const head =
    "# Project instructions\n\nThese come from instruction files, farthest first: the user's own, then the workspace root down to the working folder. " +
    'Where they conflict, the later (nearer) file wins. Follow them unless the user says otherwise.';
  const cut = files.filter((f) => f.included < f.bytes).map((f) => f.shown);
  const note = cutBytes
    ? `\n\n[Arbor: project instructions are capped at ${src.maxBytes} bytes; ${cutBytes} bytes were left out (${cut.join(', ')}). Tell the user if something you need seems missing.]`
    : '';
  return { files, skipped, text: `${head}\n\n${texts.join('\n\n')}${note}`, cutBytes };
}

/**
 * Up to `max` bytes of a regular file, and its size, from one open (`fd`, closed here), opened
 * never blocking: a FIFO or a device put where the file was after it was looked at — a command
 * in the workspace can swap them — is refused, not waited on; the size is that of what was read.
 */
function readUpTo(fd: number, max: number): { data: Buffer; bytes: number; id: string } {
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ENOTFILE' });
    const id = `${st.dev}:${st.ino}`;
    if (max <= 0) return { data: Buffer.alloc(0), bytes: st.size, id };
    const buf = Buffer.alloc(max);
    let n = 0;
    while (n < max) {
      const r = fs.readSync(fd, buf, n, max - n, n);
      if (r === 0) break;
      n += r;
    }
    return { data: buf.subarray(0, n), bytes: st.size, id };
  } finally {
    fs.closeSync(fd);
  }
}

function isFile(p: string): boolean {
  return fs.statSync(p, { throwIfNoEntry: false })?.isFile() ?? false;
}
