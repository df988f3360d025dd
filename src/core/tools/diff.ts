// A small line diff for approval cards: what a protected write will change, as a unified
// diff a human reads at a glance. Exact (LCS) for files of ordinary size; for very large
// ones it falls back to "everything removed, everything added" rather than spend seconds.

/** Lines compared by LCS at most (old × new); beyond it the diff is whole-file. */
const MAX_CELLS = 4_000_000;
/** Characters of preview sent to the card; the rest is cut with a note. */
export const MAX_PREVIEW_CHARS = 20_000;
const CONTEXT = 3;

type Op = { op: ' ' | '-' | '+'; line: string };

function lines(text: string): string[] {
  if (text === '') return [];
  const l = text.split('\n');
  if (l[l.length - 1] === '') l.pop();
  return l;
}

function ops(a: string[], b: string[]): Op[] {
  // Trim the common head and tail first: most edits touch a few lines of a long file.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  const out: Op[] = a.slice(0, head).map((line) => ({ op: ' ', line }));
  if (am.length * bm.length > MAX_CELLS) {
    for (const line of am) out.push({ op: '-', line });
    for (const line of bm) out.push({ op: '+', line });
  } else {
    // lcs[i][j] = LCS length of am[i..] and bm[j..]
    const n = am.length;
    const m = bm.length;
    const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--) lcs[i][j] = am[i] === bm[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) {
        out.push({ op: ' ', line: am[i++] });
        j++;
      } else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) out.push({ op: '-', line: am[i++] });
      else out.push({ op: '+', line: bm[j++] });
    }
  }
  for (const line of a.slice(a.length - tail)) out.push({ op: ' ', line });
  return out;
}

/**
 * A unified diff of `before` → `after` (hunks with 3 lines of context, `@@ -a,b +c,d @@`
 * headers), capped at `MAX_PREVIEW_CHARS`. Empty when nothing changes.
 */
export function unifiedDiff(before: string, after: string, name = 'file'): string {
  const all = ops(lines(before), lines(after));
  const changed = all.map((o, k) => (o.op !== ' ' ? k : -1)).filter((k) => k >= 0);
  if (changed.length === 0) return '';
  const out: string[] = [`--- a/${name}`, `+++ b/${name}`];
  let k = 0;
  while (k < changed.length) {
    const start = Math.max(0, changed[k] - CONTEXT);
    let end = Math.min(all.length, changed[k] + CONTEXT + 1);
    while (k + 1 < changed.length && changed[k + 1] - CONTEXT <= end) end = Math.min(all.length, changed[++k] + CONTEXT + 1);
    k++;
    let aStart = 1;
    let bStart = 1;
    for (let x = 0; x < start; x++) {
      if (all[x].op !== '+') aStart++;
      if (all[x].op !== '-') bStart++;
    }
    const hunk = all.slice(start, end);
    const aLen = hunk.filter((o) => o.op !== '+').length;
    const bLen = hunk.filter((o) => o.op !== '-').length;
    out.push(`@@ -${aLen ? aStart : aStart - 1},${aLen} +${bLen ? bStart : bStart - 1},${bLen} @@`);
    for (const o of hunk) out.push(`${o.op}${o.line}`);
  }
  return cap(out.join('\n'));
}

/** Cut a preview to the size a card shows, saying so. */
export function cap(text: string): string {
  if (text.length <= MAX_PREVIEW_CHARS) return text;
  return `${text.slice(0, MAX_PREVIEW_CHARS)}\n… (${text.length - MAX_PREVIEW_CHARS} more characters not shown)`;
}
