// A deliberately small Markdown reader for model text, which is untrusted. It produces a
// tree of plain objects that Svelte renders as elements and text nodes, so no HTML string
// is ever built from model output ({@html} is not used anywhere). Only http(s) links get
// an href. The scanner is linear-ish: closers that are absent are remembered, so hostile
// input ("****…") cannot make it quadratic, and nesting is capped.

export type Inline =
  | { t: 'text'; s: string }
  | { t: 'code'; s: string }
  | { t: 'strong'; c: Inline[] }
  | { t: 'em'; c: Inline[] }
  | { t: 'del'; c: Inline[] }
  /** `href` is set only for http(s) URLs; otherwise the label renders as text. */
  | { t: 'link'; href?: string; c: Inline[] }
  | { t: 'br' };

export type Block =
  | { t: 'p'; c: Inline[] }
  | { t: 'h'; level: number; c: Inline[] }
  | { t: 'code'; lang: string; s: string }
  | { t: 'list'; ordered: boolean; start: number; items: Block[][] }
  | { t: 'quote'; c: Block[] }
  /** A GFM table: header cells, alignment per column, body rows padded to the header's width. */
  | { t: 'table'; align: ('left' | 'center' | 'right' | undefined)[]; head: Inline[][]; rows: Inline[][][] }
  | { t: 'hr' };

const MAX_BLOCK_DEPTH = 6;
const MAX_INLINE_DEPTH = 4;
/** Columns past this are dropped: a hostile "|||…" line cannot make a huge table. */
const MAX_COLUMNS = 32;

export function safeHref(url: string): string | undefined {
  const u = url.trim();
  if (!/^https?:\/\/[^\s<>"]+$/i.test(u)) return undefined;
  try {
    const parsed = new URL(u);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

// ── blocks ────────────────────────────────────────────────────────────────────

const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+|$)(.*)$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)/;

function isRule(line: string): boolean {
  const s = line.trim();
  if (s.length < 3) return false;
  const c = s[0];
  if (c !== '-' && c !== '*' && c !== '_') return false;
  let n = 0;
  for (const ch of s) {
    if (ch === c) n++;
    else if (ch !== ' ' && ch !== '\t') return false;
  }
  return n >= 3;
}

const blank = (line: string): boolean => line.trim() === '';

/** A line of only the fence character, at least as long as the opening run. */
function closesFence(line: string, marker: string): boolean {
  const t = line.trim();
  if (t.length < marker.length) return false;
  for (const ch of t) if (ch !== marker[0]) return false;
  return true;
}

/** `## Title ##` → `Title` (without a backtracking regex over untrusted text). */
function stripClosingHashes(s: string): string {
  const t = s.trimEnd();
  let j = t.length;
  while (j > 0 && t[j - 1] === '#') j--;
  return (j === 0 || t[j - 1] === ' ' || t[j - 1] === '\t' ? t.slice(0, j) : t).trim();
}

function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || QUOTE.test(line) || ITEM.test(line) || isRule(line);
}

export function parseMarkdown(text: string): Block[] {
  return parseBlocks(text.replace(/\r\n?/g, '\n').split('\n'), 0);
}

function parseBlocks(lines: string[], depth: number): Block[] {
  const out: Block[] = [];
  if (depth > MAX_BLOCK_DEPTH) {
    const s = lines.join('\n').trim();
    if (s) out.push({ t: 'p', c: [{ t: 'text', s }] });
    return out;
  }
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (blank(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1];
      const body: string[] = [];
      i++;
      // An unclosed fence runs to the end: streamed text is often cut mid-block.
      while (i < lines.length) {
        if (closesFence(lines[i], marker)) break;
        body.push(lines[i]);
        i++;
      }
      i++;
      out.push({ t: 'code', lang: fence[2].slice(0, 32), s: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      out.push({ t: 'h', level: heading[1].length, c: parseInline(stripClosingHashes(heading[2])) });
      i++;
      continue;
    }
    if (isRule(line)) {
      out.push({ t: 'hr' });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i])) body.push(lines[i++].replace(QUOTE, ''));
      out.push({ t: 'quote', c: parseBlocks(body, depth + 1) });
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      i = parseList(lines, i, depth, out);
      continue;
    }
    if (tableAt(lines, i)) {
      i = parseTable(lines, i, out);
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && !blank(lines[i]) && (para.length === 0 || (!startsBlock(lines[i]) && !tableAt(lines, i)))) para.push(lines[i++].trim());
    out.push({ t: 'p', c: parseInline(para.join('\n')) });
  }
  return out;
}

// ── tables (GFM) ──────────────────────────────────────────────────────────────

/** Cells of one table line: outer pipes dropped, split on pipes that are not escaped. */
function cells(line: string): string[] {
  let t = line.trim();
  if (t.startsWith('|')) t = t.slice(1);
  if (t.endsWith('|') && !t.endsWith('\\|')) t = t.slice(0, -1);
  const out: string[] = [];
  let cur = '';
  for (let k = 0; k < t.length; k++) {
    const ch = t[k];
    if (ch === '\\' && t[k + 1] === '|') {
      cur += '|';
      k++;
    } else if (ch === '|') {
      out.push(cur.trim());
      cur = '';
      if (out.length >= MAX_COLUMNS) return out;
    } else cur += ch;
  }
  out.push(cur.trim());
  return out.slice(0, MAX_COLUMNS);
}

const DELIMITER_CELL = /^:?-+:?$/;

/** A header line with a pipe, then a delimiter row (`| --- | :-: |`) of the same width. */
function tableAt(lines: string[], i: number): boolean {
  const head = lines[i];
  const delim = lines[i + 1];
  if (delim === undefined || !head.includes('|') || !delim.includes('-')) return false;
  const d = cells(delim);
  return d.every((c) => DELIMITER_CELL.test(c)) && d.length === cells(head).length;
}

function parseTable(lines: string[], i: number, out: Block[]): number {
  const head = cells(lines[i]);
  const align = cells(lines[i + 1]).map((c) =>
    c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : c.startsWith(':') ? 'left' : undefined,
  );
  i += 2;
  const rows: Inline[][][] = [];
  while (i < lines.length && !blank(lines[i]) && lines[i].includes('|') && !startsBlock(lines[i])) {
    const row = cells(lines[i++]);
    rows.push(head.map((_, k) => parseInline(row[k] ?? '')));
  }
  out.push({ t: 'table', align, head: head.map((h) => parseInline(h)), rows });
  return i;
}

/** Reads one list starting at `i`; returns the index after it. */
function parseList(lines: string[], i: number, depth: number, out: Block[]): number {
  const first = ITEM.exec(lines[i])!;
  const ordered = /\d/.test(first[2]);
  const start = ordered ? Number.parseInt(first[2], 10) : 1;
  const items: Block[][] = [];
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]);
    if (!m || /\d/.test(m[2]) !== ordered) break;
    const indent = m[0].length;
    const body = [lines[i].slice(indent)];
    i++;
    // Continuation: indented lines (nested lists, code) and lazy paragraph lines.
    while (i < lines.length) {
      const l = lines[i];
      if (blank(l)) {
        const next = lines[i + 1];
        if (next !== undefined && /^\s{2,}\S/.test(next)) {
          body.push('');
          i++;
          continue;
        }
        break;
      }
      if (/^\s{2,}/.test(l)) {
        body.push(l.replace(new RegExp(`^ {0,${Math.max(indent, 2)}}`), ''));
        i++;
        continue;
      }
      if (ITEM.test(l) || startsBlock(l)) break;
      body.push(l);
      i++;
    }
    items.push(parseBlocks(body, depth + 1));
    // A blank line between items keeps the list going.
    if (i < lines.length && blank(lines[i])) {
      let j = i;
      while (j < lines.length && blank(lines[j])) j++;
      const n = j < lines.length ? ITEM.exec(lines[j]) : null;
      if (n && /\d/.test(n[2]) === ordered) i = j;
      else break;
    }
  }
  out.push({ t: 'list', ordered, start, items });
  return i;
}

// ── inlines ───────────────────────────────────────────────────────────────────

const PUNCT = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
const isWordChar = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}]/u.test(c);

export function parseInline(text: string): Inline[] {
  return inline(text, 0, new Map());
}

/**
 * `missing` remembers, per closer string, the smallest position from which it is known
 * to be absent: one failed search per closer instead of one per opener.
 */
function inline(src: string, depth: number, missing: Map<string, number>): Inline[] {
  const out: Inline[] = [];
  let buf = '';
  const flush = () => {
    if (buf) out.push({ t: 'text', s: buf });
    buf = '';
  };
  const find = (closer: string, from: number): number => {
    const known = missing.get(closer);
    if (known !== undefined && from >= known) return -1;
    const j = src.indexOf(closer, from);
    if (j < 0) missing.set(closer, Math.min(known ?? from, from));
    return j;
  };
  // Inner texts are parsed with a fresh memo: positions there are relative to the slice.
  const sub = (s: string): Inline[] => (depth >= MAX_INLINE_DEPTH ? [{ t: 'text', s }] : inline(s, depth + 1, new Map()));

  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '\\' && i + 1 < src.length && PUNCT.includes(src[i + 1])) {
      buf += src[i + 1];
      i += 2;
      continue;
    }
    if (c === '\n') {
      flush();
      out.push({ t: 'br' });
      i++;
      continue;
    }
    if (c === '`') {
      let n = 1;
      while (src[i + n] === '`') n++;
      const ticks = '`'.repeat(n);
      const j = find(ticks, i + n);
      if (j >= 0) {
        flush();
        let s = src.slice(i + n, j).replace(/\n/g, ' ');
        if (s.length > 2 && s.startsWith(' ') && s.endsWith(' ')) s = s.slice(1, -1);
        out.push({ t: 'code', s });
        i = j + n;
      } else {
        buf += ticks;
        i += n;
      }
      continue;
    }
    if ((c === '*' || c === '_' || c === '~') && !(c === '_' && isWordChar(src[i - 1]))) {
      const double = src[i + 1] === c;
      if (c === '~' && !double) {
        buf += c;
        i++;
        continue;
      }
      const delim = double ? c + c : c;
      const open = i + delim.length;
      // An opener must touch text: "a * b" is not emphasis.
      if (open < src.length && !/\s/.test(src[open])) {
        let j = find(delim, open + 1);
        // For single `*`/`_`, skip a doubled closer belonging to a strong span.
        for (let k = 0; j >= 0 && !double && src[j + 1] === c; k++) j = k < 32 ? find(delim, j + 2) : -1;
        if (j >= 0 && !/\s/.test(src[j - 1]) && !(c === '_' && isWordChar(src[j + delim.length]))) {
          flush();
          const kind = c === '~' ? 'del' : double ? 'strong' : 'em';
          out.push({ t: kind, c: sub(src.slice(open, j)) });
          i = j + delim.length;
          continue;
        }
      }
      buf += delim;
      i += delim.length;
      continue;
    }
    if (c === '[') {
      const mid = find('](', i + 1);
      const close = mid >= 0 ? find(')', mid + 2) : -1;
      const url = close >= 0 ? src.slice(mid + 2, close) : '';
      if (mid >= 0 && close >= 0 && !src.slice(i + 1, mid).includes('\n') && !/\s/.test(url.trim())) {
        flush();
        out.push({ t: 'link', href: safeHref(url), c: sub(src.slice(i + 1, mid)) });
        i = close + 1;
        continue;
      }
      buf += c;
      i++;
      continue;
    }
    if (c === 'h' && !isWordChar(src[i - 1]) && (src.startsWith('https://', i) || src.startsWith('http://', i))) {
      let j = i;
      while (j < src.length && !/[\s<>"`]/.test(src[j])) j++;
      while (j > i && /[.,;:!?)'\]*_]/.test(src[j - 1])) j--;
      const url = src.slice(i, j);
      const href = safeHref(url);
      if (href) {
        flush();
        out.push({ t: 'link', href, c: [{ t: 'text', s: url }] });
        i = j;
        continue;
      }
    }
    buf += c;
    i++;
  }
  flush();
  return out;
}

/**
 * Splits streamed text at its last paragraph break outside a code fence: the head will
 * not change as more text arrives (its blocks can be parsed once), only the tail will.
 * Returns the length of the head.
 */
export function stablePrefix(text: string): number {
  let cut = 0;
  let fence: string | undefined;
  let i = 0;
  while (i < text.length) {
    const nl = text.indexOf('\n', i);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(i, end);
    if (nl < 0) break; // the last line is still being written
    const f = FENCE.exec(line);
    if (fence !== undefined) {
      if (closesFence(line, fence)) fence = undefined;
    } else if (f) {
      fence = f[1];
    } else if (blank(line)) {
      cut = nl + 1;
    }
    i = nl + 1;
  }
  return cut;
}
