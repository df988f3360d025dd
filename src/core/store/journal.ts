import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import { fsyncDir } from './fsutil';
import type { StoreCounters } from './stats';

// Journal file format: a sequence of records, each
//   u32 magic 'ARJ1' | u32 payload length | u32 crc32(payload) | payload (UTF-8 JSON)
// all little-endian. A record is acknowledged only after its bytes are fdatasync'd,
// so a crash can leave at most one torn record, and only at the tail.

const MAGIC = 0x314a5241; // 'ARJ1' read as little-endian u32
const HEADER = 12;
/** Records up to this size are written synchronously (page cache), larger ones in the thread pool. */
const SYNC_WRITE_BYTES = 64 * 1024;
/** The most an open reads back (a length past it is damage, not data); a write past it is refused (TOO_LARGE). */
export const MAX_RECORD_BYTES = 256 * 1024 * 1024;

export interface JournalRecord {
  lsn: number;
  [k: string]: unknown;
}

/** A record longer than an open accepts: acknowledged, it would be discarded as damage after a crash. */
export class RecordTooLarge extends Error {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`a journal record of ${bytes} bytes passes the limit of ${limit}`);
  }
}

/** The limit a write obeys: `requested` (tests lower it), never above MAX_RECORD_BYTES. */
export function maxRecordBytes(requested?: number): number {
  return Math.min(requested ?? MAX_RECORD_BYTES, MAX_RECORD_BYTES);
}

/** The record's bytes; RecordTooLarge, before anything is allocated for it, past `maxBytes` (see maxRecordBytes). */
export function encodeRecord(rec: JournalRecord, maxBytes?: number): Buffer {
  const json = JSON.stringify(rec);
  // Encoded straight into the record (no intermediate payload buffer): this is on every append's path.
  const length = Buffer.byteLength(json, 'utf8');
  const limit = maxRecordBytes(maxBytes);
  if (length > limit) throw new RecordTooLarge(length, limit);
  const out = Buffer.allocUnsafe(HEADER + length);
  out.write(json, HEADER, 'utf8');
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(length, 4);
  out.writeUInt32LE(crc32(out.subarray(HEADER)), 8);
  return out;
}

export interface ScanResult {
  records: JournalRecord[];
  /** Byte offset just past the last good record. */
  goodBytes: number;
  /** What follows `goodBytes`: nothing, a torn tail (crash mid-write), or damage with data after it. */
  tail: 'clean' | 'torn' | 'corrupt';
  reason?: string;
}

/**
 * Read every whole record. A bad record that reaches the end of the file is a torn tail
 * (the write that was never acknowledged); a bad record followed by more bytes is damage.
 */
export function scanJournal(buf: Buffer): ScanResult {
  const records: JournalRecord[] = [];
  let off = 0;
  const stop = (tail: ScanResult['tail'], reason: string): ScanResult => ({ records, goodBytes: off, tail, reason });
  while (off < buf.length) {
    if (buf.length - off < HEADER) return stop('torn', `${buf.length - off} bytes of a record header at the end`);
    const magic = buf.readUInt32LE(off);
    const len = buf.readUInt32LE(off + 4);
    if (magic !== MAGIC) {
      return isZero(buf, off) ? stop('torn', 'zero-filled tail') : stop('corrupt', `bad record marker at byte ${off}`);
    }
    if (len > MAX_RECORD_BYTES) return stop('corrupt', `impossible record length ${len} at byte ${off}`);
    const end = off + HEADER + len;
    if (end > buf.length) return stop('torn', `record at byte ${off} cut short`);
    const payload = buf.subarray(off + HEADER, end);
    if (crc32(payload) !== buf.readUInt32LE(off + 8)) {
      return end === buf.length ? stop('torn', `checksum mismatch in the last record (byte ${off})`) : stop('corrupt', `checksum mismatch at byte ${off}`);
    }
    let rec: JournalRecord;
    try {
      rec = JSON.parse(payload.toString('utf8')) as JournalRecord;
    } catch {
      return stop('corrupt', `unreadable record at byte ${off}`);
    }
    if (typeof rec !== 'object' || rec === null || !Number.isSafeInteger(rec.lsn)) return stop('corrupt', `record without lsn at byte ${off}`);
    records.push(rec);
    off = end;
  }
  return { records, goodBytes: off, tail: 'clean' };
}

function isZero(buf: Buffer, from: number): boolean {
  for (let i = from; i < buf.length; i++) if (buf[i] !== 0) return false;
  return true;
}

/** Positional write + fdatasync of whole buffers; the caller serialises calls. */
export class JournalFile {
  private constructor(
    readonly file: string,
    private readonly fh: fs.promises.FileHandle,
    private bytes: number,
    private readonly counters?: StoreCounters,
    /**
     * Created by this open: its name is not yet durable in its folder. An fdatasync covers the
     * file's bytes, not the folder entry that finds it, so the first append also syncs the folder
     * (beside its fdatasync, not after it); until then nothing in the file was acknowledged.
     */
    private unlisted = false,
  ) {}

  static async open(file: string, size: number, counters?: StoreCounters): Promise<JournalFile> {
    const existed = fs.existsSync(file);
    const fh = await fs.promises.open(file, existed ? 'r+' : 'w+');
    return new JournalFile(file, fh, size, counters, !existed);
  }

  get size(): number {
    return this.bytes;
  }

  /**
   * Append and make durable; `whileSyncing` runs (synchronously) once the bytes are written
   * and the fdatasync is under way, so CPU work overlaps the disk's. On failure the file is
   * cut back to its last good size, so a failed write never leaves a half record in front of
   * later ones; `whileSyncing` has run only if the failure came from the fdatasync.
   */
  async append(buf: Buffer, whileSyncing?: () => void): Promise<void> {
    try {
      const started = this.counters ? performance.now() : 0;
      let done = 0;
      if (buf.length <= SYNC_WRITE_BYTES) {
        // Into the page cache, a few µs: one thread-pool round trip (the fdatasync) instead of two.
        while (done < buf.length) done += fs.writeSync(this.fh.fd, buf, done, buf.length - done, this.bytes + done);
      }
      while (done < buf.length) {
        const { bytesWritten } = await this.fh.write(buf, done, buf.length - done, this.bytes + done);
        done += bytesWritten;
      }
      const synced = Promise.all([this.fh.datasync(), this.unlisted ? fsyncDir(path.dirname(this.file)) : undefined]);
      if (this.counters) {
        this.counters.syncs += this.unlisted ? 2 : 1;
        this.counters.commits++;
      }
      whileSyncing?.();
      await synced;
      if (this.counters) this.counters.commitMs += performance.now() - started;
      this.unlisted = false;
      this.bytes += buf.length;
    } catch (err) {
      await this.fh.truncate(this.bytes).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Drop everything (after a checkpoint made it redundant). The size is taken as soon as the
   * file is cut, before its fdatasync: should that fail, the next append still goes to the
   * start, never behind a run of zeros a reopen would read as a torn tail and cut off.
   */
  async reset(): Promise<void> {
    await this.truncate(0);
  }

  /** Cut a torn tail off at `size` (the size taken once cut, as `reset`). */
  async truncate(size: number): Promise<void> {
    await this.fh.truncate(size);
    this.bytes = size;
    if (this.counters) this.counters.syncs++;
    await this.fh.datasync();
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}
