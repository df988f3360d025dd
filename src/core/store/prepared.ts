import type { Database, Statement } from 'sql.js';

// Statements prepared once per sql.js connection and reused, and forgotten when the
// connection frees them (an export, which a checkpoint makes).

const statements = new WeakMap<Database, Map<string, Statement>>();

/**
 * A statement prepared once per connection and reused: db.run(sql, params) prepares and frees
 * one on every call. sql.js frees them all on export() (writeCheckpoint forgets them) and close().
 */
export function prepared(db: Database, sql: string): Statement {
  let cache = statements.get(db);
  if (!cache) statements.set(db, (cache = new Map()));
  let stmt = cache.get(sql);
  if (!stmt) cache.set(sql, (stmt = db.prepare(sql)));
  return stmt;
}

/** export() closed and reopened the connection: its statements are freed, so none is reused. */
export function forgetPrepared(db: Database): void {
  statements.delete(db);
}
