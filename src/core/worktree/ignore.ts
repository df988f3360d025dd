import * as fs from 'node:fs';
import * as path from 'node:path';

// The root's ignore rules read in-process (decision 0059): the shadow's own excludes plus every
// `.gitignore` from the root down, with git's semantics — last matching rule wins, deeper files
// override shallower ones, `!` re-includes, a trailing `/` matches folders only, a `/` inside
// anchors to the file's folder, and nothing under an ignored folder can be re-included. A file
// tool's write is checked without starting a git (a command's snapshot lets `git add` apply the
// same rules itself). The user's global excludes file is not read, as the shadow's git reads none.

interface Rule {
  re: RegExp;
  negate: boolean;
  dirOnly: boolean;
}

/** One gitignore pattern as a regular expression over a path relative to the rule's folder. */
export function compilePattern(line: string): Rule | undefined {
  let p = line.replace(/(?<!\\)\s+$/, '');
  if (p === '' || p.startsWith('#')) return undefined;
  let negate = false;
  if (p.startsWith('!')) {
    negate = true;
    p = p.slice(1);
  } else if (p.startsWith('\\!') || p.startsWith('\\#')) p = p.slice(1);
  const dirOnly = p.endsWith('/');
  if (dirOnly) p = p.slice(0, -1);
  const anchored = p.includes('/');
  if (p.startsWith('/')) p = p.slice(1);
  if (p === '') return undefined;
  let re = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '*' && p[i + 1] === '*' && (i === 0 || p[i - 1] === '/') && (i + 2 === p.length || p[i + 2] === '/')) {
      // `**` as a whole component: any number of folders (none included).
      if (i + 2 === p.length) re += '.*';
      else {
        re += '(?:.*/)?';
        i += 2;
        continue;
      }
      i += 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = p.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = p.slice(i + 1, end).replace(/\\/g, '\\\\');
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        re += `[${body}]`;
        i = end;
      }
    } else if (c === '\\' && i + 1 < p.length) re += literal(p[++i]);
    else re += literal(c);
  }
  return { re: new RegExp(`^${anchored ? '' : '(?:.*/)?'}${re}$`), negate, dirOnly };
}

const literal = (c: string): string => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

export class IgnoreRules {
  /** Rules per folder (relative, '' for the root), from its `.gitignore`; the root's start with the excludes. */
  private readonly byDir = new Map<string, Rule[]>();

  constructor(
    private readonly root: string,
    private readonly excludes: readonly string[],
  ) {}

  /** A `.gitignore` changed: read them again when next asked. */
  forget(): void {
    this.byDir.clear();
  }

  /** Whether the file (with `dir`, the folder) at `rel` (relative to the root, `/`-separated) is ignored. */
  ignored(rel: string, dir = false): boolean {
    const parts = rel.split('/');
    // A folder that is ignored hides everything below it: check each folder on the way down.
    for (let i = 1; i <= parts.length; i++) {
      if (this.matches(parts.slice(0, i), i < parts.length || dir)) return true;
    }
    return false;
  }

  private matches(parts: string[], isDir: boolean): boolean {
    let verdict = false;
    for (let depth = 0; depth < parts.length; depth++) {
      const base = parts.slice(0, depth).join('/');
      const sub = parts.slice(depth).join('/');
      for (const r of this.rulesOf(base)) {
        if (r.dirOnly && !isDir) continue;
        if (r.re.test(sub)) verdict = !r.negate;
      }
    }
    return verdict;
  }

  /** A folder's rules, read once (synchronously: a small file, read before a tool call, see recorder.ts). */
  private rulesOf(dir: string): Rule[] {
    let rules = this.byDir.get(dir);
    if (!rules) {
      let text = '';
      try {
        text = readRulesFile(path.join(this.root, dir, '.gitignore'));
      } catch {
        // no .gitignore in this folder (or none git would read)
      }
      rules = [...(dir === '' ? this.excludes : []), ...text.split(/\r?\n/)].flatMap((l) => compilePattern(l) ?? []);
      this.byDir.set(dir, rules);
    }
    return rules;
  }
}

/**
 * A `.gitignore`'s text, or '' when it is not a regular file. Never blocking: a FIFO a command
 * made there would otherwise hold the host's thread, where this is read, until something wrote
 * to it. (A link is followed, as before: stat-index.ts and `gitAgrees` cover where git does not.)
 */
export function readRulesFile(file: string): string {
  const C = fs.constants;
  const fd = fs.openSync(file, C.O_RDONLY | (C.O_NONBLOCK ?? 0));
  try {
    if (!fs.fstatSync(fd).isFile()) return '';
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}
