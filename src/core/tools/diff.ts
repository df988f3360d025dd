// A small line diff for approval cards and rewind previews: what a write will change, as a
// unified diff a human reads at a glance. Exact and minimal (Myers' O(ND) algorithm: the time
// grows with the lines changed, not with the product of the files' lengths, so a 1,000-line
// file with two edits costs about as much as reading it); when the files differ in so many
// lines that finding the shortest script would cost more than MAX_CELLS steps, the diff is
// whole-file ("everything removed, everything added") rather than spend seconds.

/** Steps (lines compared, and the edit graph's diagonals kept for the way back) a diff may take; beyond it the diff is whole-file. */
const MAX_CELLS = 4_000_000;
/** Characters of preview sent to the card; the rest is cut with a note. */
export const MAX_PREVIEW_CHARS = 20_000;
const CONTEXT = 3;

export type Op = { op: ' ' | '-' | '+'; line: string };

function lines(text: string): string[] {
  if (text === '') return [];
  const l = text.split('\n');
  if (l[l.length - 1] === '') l.pop();
  return l;
}

/** The line-by-line script from `a` to `b`: kept (' '), removed ('-') and added ('+') lines, in order. */
export function editScript(a: string[], b: string[]): Op[] {
  // Trim the common head and tail first: most edits touch a few lines of a long file.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  const out: Op[] = a.slice(0, head).map((line) => ({ op: ' ', line }));
  // No line in common (a file rewritten): the shortest script is every line out, then every line in.
  const inB = new Set(bm);
  const middle = am.some((line) => inB.has(line)) ? shortestScript(am, bm) : undefined;
  // One push a line: a spread of a 150,000-line middle would pass the call stack's argument limit.
  if (middle) for (const o of middle) out.push(o);
  else {
    for (const line of am) out.push({ op: '-', line });
    for (const line of bm) out.push({ op: '+', line });
  }
  for (const line of a.slice(a.length - tail)) out.push({ op: ' ', line });
  return out;
}

/**
 * The shortest edit script from `a` to `b` (Myers 1986): for d = 0, 1, … the furthest point each
 * diagonal k = x − y reaches with d edits, each followed by its run of equal lines; the first d
 * that reaches the end is the script's length. The furthest points of every round are kept to
 * walk back from the end. Undefined past MAX_CELLS steps. Within a run of changes, removals come
 * before additions, as git shows them.
 */
function shortestScript(a: string[], b: string[]): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  if (max === 0) return [];
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const rounds: Int32Array[] = [];
  let steps = 0;
  for (let d = 0; d <= max; d++) {
    // The furthest points before this round, on diagonals -d-1 … d+1 (all this round reads).
    rounds.push(v.slice(off - d - 1, off + d + 2));
    steps += 2 * d + 3;
    for (let k = -d; k <= d; k += 2) {
      // From the diagonal above (an addition: y moves) or the one below (a removal: x moves); a removal on a tie.
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
        steps++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) return walkBack(a, b, rounds, d);
    }
    if (steps > MAX_CELLS) return undefined;
  }
  return undefined;
}

/** The script's operations, from the furthest points kept per round, in order. */
function walkBack(a: string[], b: string[], rounds: Int32Array[], dEnd: number): Op[] {
  const back: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = dEnd; d >= 0; d--) {
    const before = rounds[d]; // index i holds diagonal i - d - 1
    const at = (k: number) => before[k + d + 1];
    const k = x - y;
    const prevK = d === 0 ? 0 : k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      y--;
      back.push({ op: ' ', line: a[--x] });
    }
    if (d === 0) break;
    if (x === prevX) back.push({ op: '+', line: b[--y] });
    else back.push({ op: '-', line: a[--x] });
  }
  back.reverse();
  return removalsFirst(back);
}

/** Each run of changes as its removals, then its additions (the same changes, shown as git does). */
function removalsFirst(all: Op[]): Op[] {
  const out: Op[] = [];
  for (let i = 0; i < all.length; ) {
    if (all[i].op === ' ') {
      out.push(all[i++]);
      continue;
    }
    const added: Op[] = [];
    for (; i < all.length && all[i].op !== ' '; i++) (all[i].op === '-' ? out : added).push(all[i]);
    for (const o of added) out.push(o);
  }
  return out;
}

/**
 * A unified diff of `before` → `after` (hunks with 3 lines of context, `@@ -a,b +c,d @@`
 * headers), capped at `MAX_PREVIEW_CHARS`. Empty when nothing changes.
 */
export function unifiedDiff(before: string, after: string, name = 'file'): string {
  const all = editScript(lines(before), lines(after));
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
