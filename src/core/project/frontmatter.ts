/**
 * The YAML-ish frontmatter of agent files (Claude Code's `---` block): `key: value`, quoted
 * values, inline lists `[a, b]`, block lists (`key:` then `- item` lines), `#` comments. Not a
 * YAML parser: what it does not understand is an error naming the line, never a guess.
 */

export type FrontValue = string | string[];

export interface FrontField {
  value: FrontValue;
  /** 1-based line of the key in the file. */
  line: number;
}

export interface Parsed {
  fields: Map<string, FrontField>;
  body: string;
  /** 1-based line the body starts on. */
  bodyLine: number;
}

export class FrontmatterError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

const KEY = /^([A-Za-z][\w-]*)\s*:(.*)$/;

export function parseFrontmatter(text: string): Parsed {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---') throw new FrontmatterError(1, 'the file must start with a "---" line opening the frontmatter (name, description, …)');
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
  if (end < 0) throw new FrontmatterError(1, 'the frontmatter opened on line 1 is never closed with a "---" line');
  const fields = new Map<string, FrontField>();
  let list: { key: string; items: string[] } | undefined;
  for (let i = 1; i < end; i++) {
    const raw = lines[i];
    const lineNo = i + 1;
    const t = raw.trim();
    if (t === '' || t.startsWith('#')) continue;
    if (t.startsWith('- ') || t === '-') {
      if (!list) throw new FrontmatterError(lineNo, 'a "- item" line must follow a "key:" line');
      list.items.push(scalar(t.slice(1).trim(), lineNo));
      continue;
    }
    const m = KEY.exec(t);
    if (!m || raw.startsWith(' ') || raw.startsWith('\t')) throw new FrontmatterError(lineNo, `cannot read "${t.slice(0, 60)}": expected "key: value"`);
    const key = m[1];
    if (fields.has(key)) throw new FrontmatterError(lineNo, `"${key}" is set twice (first on line ${fields.get(key)?.line})`);
    const rest = m[2].trim();
    if (rest === '') {
      const items: string[] = [];
      fields.set(key, { value: items, line: lineNo });
      list = { key, items };
      continue;
    }
    list = undefined;
    fields.set(key, { value: rest.startsWith('[') ? inlineList(rest, lineNo) : scalar(rest, lineNo), line: lineNo });
  }
  return {
    fields,
    body: lines
      .slice(end + 1)
      .join('\n')
      .trim(),
    bodyLine: end + 2,
  };
}

function scalar(v: string, line: number): string {
  const q = v[0];
  if (q === '"' || q === "'") {
    const close = v.indexOf(q, 1);
    const after = close < 0 ? '' : v.slice(close + 1).trim();
    if (close < 0 || (after !== '' && !after.startsWith('#')))
      throw new FrontmatterError(
        line,
        close < 0 ? `unterminated ${q === '"' ? 'double' : 'single'}-quoted value` : `unexpected "${after}" after the quoted value`,
      );
    return v.slice(1, close);
  }
  // An unquoted value ends at a comment.
  const hash = v.search(/\s#/);
  return (hash >= 0 ? v.slice(0, hash) : v).trim();
}

function inlineList(v: string, line: number): string[] {
  if (!v.endsWith(']')) throw new FrontmatterError(line, 'an inline list must end with "]" on the same line');
  const inner = v.slice(1, -1).trim();
  return inner === '' ? [] : inner.split(',').map((s) => scalar(s.trim(), line));
}
