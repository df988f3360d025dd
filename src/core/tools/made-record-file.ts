import * as fs from 'node:fs';
import { withFileLock } from '../store/file-lock';

// The made-by-commands record's file (decision 0111; `made-by-commands.ts` says what its lines
// mean): appended by many processes at once with `O_APPEND` and no lock, compacted by one at a time
// under a lock file, and read without the lock when no compaction can have it half. A compaction
// writes its rewrite beside the record, gives the old record a second name (`.prev`), renames the
// rewrite over it, carries over what other processes appended to the old one after it was read,
// and only then drops the second name: a compaction killed anywhere in between loses no line, the
// next holder of the lock carries the old record over (`carryPrevious`).

/** The identity of what is at `p` (not followed): device, inode and birth time; undefined when nothing is. */
export function identityOf(p: string): string | undefined {
  try {
    const st = fs.lstatSync(p, { bigint: true });
    return `${st.dev}:${st.ino}:${st.birthtimeNs}`;
  } catch {
    return undefined;
  }
}

/**
 * Rewrite the record to `keep(text)` (one line each, after a first line saying how many bytes it
 * kept) under the compaction's lock, waiting `waitMs` for another process's compaction before
 * leaving it to that one. Returns whether it ran.
 */
export function compactRecord(file: string, keep: (text: string) => string[], waitMs: number): boolean {
  let ran = false;
  // The users' one lock between processes (`store/file-lock.ts`: a dead holder's taken over by
  // its pid); a compaction under way elsewhere is left to its holder after a short wait.
  withFileLock(`${file}.lock`, () => (ran = rewrite(file, keep)), waitMs);
  return ran;
}

/** The rewrite itself, under the compaction's lock. */
function rewrite(file: string, keep: (text: string) => string[]): boolean {
  let fd: number | undefined;
  let tmp: string | undefined;
  try {
    carryPrevious(file);
    fd = fs.openSync(file, 'r');
    const read = fs.fstatSync(fd).size;
    const kept = keep(readRange(fd, 0, read));
    const text = [JSON.stringify({ compacted: Buffer.byteLength(kept.join('\n')) + kept.length, at: new Date().toISOString() }), ...kept]
      .map((l) => `${l}\n`)
      .join('');
    tmp = `${file}.${process.pid}.tmp`;
    // On disk before it replaces the record: a crash must not leave a short or empty record.
    const out = fs.openSync(tmp, 'w', 0o600);
    try {
      writeAll(out, text);
      fs.fsyncSync(out);
    } finally {
      fs.closeSync(out);
    }
    // The old record keeps a second name until what was appended to it after the read is carried
    // over: a compaction killed between the rename and the carry-over leaves it for the next
    // holder of the lock (`carryPrevious`), instead of losing a command's `.claude` for good.
    const prev = previousOf(file);
    fs.linkSync(file, prev);
    fs.renameSync(tmp, file);
    // What other processes appended to the old file after it was read: carried over whole.
    const tail = readRange(fd, read, fs.fstatSync(fd).size - read);
    const late = tail.split('\n').filter(Boolean);
    if (late.length > 0) appendLines(file, late);
    fs.unlinkSync(prev);
    return true;
  } catch {
    // The record could not be rewritten (a full disk): it stays as it is, only longer; an old
    // record kept under its second name is carried over now, or by the next holder of the lock.
    try {
      if (tmp) fs.rmSync(tmp, { force: true });
      carryPrevious(file);
    } catch {
      // Left for the next holder of the lock (`carryPrevious`).
    }
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * The record's text, as no compaction under way has it half: a compaction renames its rewrite
 * over the record and only then carries over what other processes appended meanwhile, so a read
 * between the two would miss appearances already written (a command's `.claude` read as the
 * user's). Read without the lock when the record was there before no lock was (`readSettled`);
 * else once the compaction's lock is had. A compaction holds it for milliseconds; past `waitMs`
 * (a holder that hangs) the record is read as it is, with an old record a killed one left.
 */
export function readRecord(file: string, waitMs: number): string {
  const settled = readSettled(file);
  if (settled !== undefined) return settled;
  let text: string | undefined;
  withFileLock(
    `${file}.lock`,
    () => {
      try {
        carryPrevious(file);
      } catch {
        // Not carried over (a full disk): read beside the record below.
      }
      text = withPrevious(file);
    },
    waitMs,
  );
  return text ?? withPrevious(file);
}

/**
 * The record's text without taking the lock, when no compaction can have it half: the file at the
 * path is looked at first, then the lock is seen absent, then the file is opened and must be the
 * one looked at. A compaction's rewrite at the path when it was looked at was put there under a
 * lock that is gone by the time it was seen absent, so its carry-over is in; a rename after the
 * look gives another file, and the lock is taken instead. A file read as it is renamed away has
 * every line appended before (appenders that see the rename append again to the new one: later
 * lines, as if read a moment earlier). Undefined when a compaction may be under way (the lock
 * is there, or the file changed between the look and the open): the caller takes the lock.
 */
function readSettled(file: string): string | undefined {
  const seen = identityOf(file);
  // Anything at the lock's name (a link, a folder too) counts as a compaction under way, and so
  // does an old record one left (killed before its carry-over): both are read under the lock.
  if (identityOf(`${file}.lock`) !== undefined || identityOf(previousOf(file)) !== undefined) return undefined;
  if (seen === undefined) return ''; // no record yet
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (`${st.dev}:${st.ino}:${st.birthtimeNs}` !== seen) return undefined;
    return readRange(fd, 0, Number(st.size));
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** Where a compaction keeps the old record until its carry-over is done. */
const previousOf = (file: string): string => `${file}.prev`;

/**
 * Under the compaction's lock: the old record a compaction killed between its rename and its
 * carry-over left, appended whole to the record (a line twice counts once: the next compaction
 * keeps one) and then removed. Nothing when there is none, or it is the record itself (killed
 * before its rename).
 */
function carryPrevious(file: string): void {
  const prev = previousOf(file);
  const old = identityOf(prev);
  if (old === undefined) return;
  if (old !== identityOf(file)) {
    const lines = readText(prev).split('\n').filter(Boolean);
    if (lines.length > 0) appendLines(file, lines);
  }
  fs.unlinkSync(prev);
}

/** The record's text and that of an old record a killed compaction left, if any (a line in both counts once). */
const withPrevious = (file: string): string => `${readText(file)}\n${readText(previousOf(file))}`;

/** The file's text; empty when it cannot be read (no record yet). */
function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * `lines` appended (`O_APPEND`: processes writing at once do not mix lines); when a compaction
 * replaced the file meanwhile, so the lines went to the file it read, again to the new one.
 * Returns the file's size after.
 */
export function appendLines(file: string, lines: readonly string[]): number {
  // Begun on a line of its own: an append a full disk cut short (it threw) leaves a line without
  // its end, which would otherwise swallow the next one (an empty line counts for nothing).
  const text = `\n${lines.join('\n')}\n`;
  for (let i = 0; ; i++) {
    const fd = fs.openSync(file, 'a', 0o600);
    let wrote: fs.Stats;
    try {
      appendWhole(fd, text);
      wrote = fs.fstatSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    let now: fs.Stats | undefined;
    try {
      now = fs.statSync(file);
    } catch {
      // Gone between the write and this look: written again below.
    }
    if ((now && now.ino === wrote.ino && now.dev === wrote.dev) || i >= 8) return now?.size ?? wrote.size;
  }
}

/** What the record's last compaction kept, in bytes (its first line says); 0 when it never ran. */
export function keptAtLastCompaction(file: string): number {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const head = readRange(fd, 0, 200).split('\n')[0];
      const v = JSON.parse(head) as { compacted?: unknown };
      return typeof v.compacted === 'number' ? v.compacted : 0;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return 0;
  }
}

/**
 * All of `text` written: a write the disk cannot take whole returns short without an error (a
 * rewrite renamed over the record so would drop every line past the cut); the rest is written
 * again, and a full disk then throws (ENOSPC, EFBIG).
 */
function writeAll(fd: number, text: string): void {
  const buf = Buffer.from(text);
  for (let done = 0; done < buf.length; ) {
    const n = fs.writeSync(fd, buf, done, buf.length - done);
    if (n <= 0) throw Object.assign(new Error('the record could not be written (no space left)'), { code: 'ENOSPC' });
    done += n;
  }
}

/**
 * `text` appended by one write that took it whole: one cut short by a full disk is written whole
 * again (its cut part is a line of its own, read as nothing), since the rest written after it
 * could land behind another process's append. Throws when the disk takes none whole.
 */
function appendWhole(fd: number, text: string): void {
  const buf = Buffer.from(text);
  for (let i = 0; i < 2; i++) if (fs.writeSync(fd, buf) === buf.length) return;
  throw Object.assign(new Error('the record could not be appended to (no space left)'), { code: 'ENOSPC' });
}

function readRange(fd: number, from: number, length: number): string {
  if (length <= 0) return '';
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = fs.readSync(fd, buf, got, length - got, from + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got).toString('utf8');
}
