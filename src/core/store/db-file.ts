import { crc32 } from 'node:zlib';
import type { Database, SqlJsStatic } from 'sql.js';
import { StoreError } from './errors';

// A journaled store file's database as bytes on disk (DESIGN §3): the crc seal in its SQLite
// header, the checks and schema migrations a load runs, and the pragmas every connection takes.

export interface Schema {
  /** What kind of file this is ('catalog', 'tree'); a file of another kind is refused. */
  kind: string;
  version: number;
  create(db: Database): void;
  /** migrations[v] upgrades a file from version v to v + 1. */
  migrations: Record<number, (db: Database) => void>;
}

/**
 * Durability comes from our journal, so SQLite's own rollback journal (a file in sql.js's
 * in-memory FS, created, written and deleted on every transaction) is pure cost: keep it in
 * memory and skip its syncs. Exclusive locking: one connection owns the in-memory file, so
 * SQLite need not look for a hot journal and re-read page 1 at every transaction (which was
 * most of an append's CPU). Rollback still works; no pragma is stored in the file.
 */
export function tune(db: Database): void {
  db.run('PRAGMA journal_mode = MEMORY');
  db.run('PRAGMA synchronous = OFF');
  db.run('PRAGMA locking_mode = EXCLUSIVE');
}

/**
 * SQLite pages carry no checksum: a damaged byte inside a row reads back as different data.
 * Each checkpoint therefore stores crc32 of the file in bytes 68–71 of the SQLite header
 * (the application_id field, which SQLite keeps as is), computed with those bytes zeroed.
 */
const CRC_AT = 68;

export function seal(bytes: Uint8Array): void {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  b.writeUInt32BE(0, CRC_AT);
  b.writeUInt32BE(crc32(b), CRC_AT);
}
/** True when the stored crc matches (0: a file written before checksums, not checked). */
function sealed(bytes: Buffer): boolean {
  const stored = bytes.readUInt32BE(CRC_AT);
  if (stored === 0) return true;
  bytes.writeUInt32BE(0, CRC_AT);
  const ok = crc32(bytes) === stored;
  bytes.writeUInt32BE(stored, CRC_AT);
  return ok;
}

export function loadVerified(SQL: SqlJsStatic, bytes: Buffer, schema: Schema): { db: Database; lsn: number; migrated: boolean } {
  if (bytes.length === 0) throw new Error('the file is empty');
  const pageSize = bytes.length >= 18 ? bytes.readUInt16BE(16) : 0;
  const pages = bytes.length >= 32 ? bytes.readUInt32BE(28) : 0;
  const declared = (pageSize === 1 ? 65536 : pageSize) * pages;
  if (declared !== bytes.length) throw new Error(`the file holds ${bytes.length} bytes but its header declares ${declared}`);
  if (!sealed(bytes)) throw new Error('its checksum does not match its contents');
  const db = new SQL.Database(bytes);
  try {
    const meta = new Map<string, unknown>();
    const res = db.exec('SELECT key, value FROM meta');
    for (const [k, v] of res[0]?.values ?? []) meta.set(String(k), v);
    if (meta.get('kind') !== schema.kind) throw new Error(`it is not an Arbor ${schema.kind} file`);
    let version = Number(meta.get('schema'));
    if (!Number.isSafeInteger(version) || version < 1) throw new Error('its schema version is unreadable');
    if (version > schema.version)
      throw new StoreError('SCHEMA_TOO_NEW', `It was written by a newer Arbor (schema ${version}, this one reads up to ${schema.version}); update Arbor.`);
    for (; version < schema.version; version++) {
      db.run('BEGIN');
      schema.migrations[version](db);
      db.run("UPDATE meta SET value = ? WHERE key = 'schema'", [version + 1]);
      db.run('COMMIT');
    }
    tune(db);
    return { db, lsn: Number(meta.get('lsn') ?? 0), migrated: Number(meta.get('schema')) < schema.version };
  } catch (err) {
    db.close();
    throw err;
  }
}
