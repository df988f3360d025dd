import type { Schema } from './db-file';

// Two kinds of sql.js file: one catalog (every header, for list/children) and one file
// per conversation tree (a root and its descendants' events). Sizing a file by tree keeps
// sql.js's whole-file-in-memory cost to the trees in use, and a damaged file costs one tree.

const META = 'CREATE TABLE meta (key TEXT PRIMARY KEY, value)';

export const TREE_SCHEMA: Schema = {
  kind: 'tree',
  version: 1,
  create(db) {
    db.run(META);
    db.run('CREATE TABLE sessions (id TEXT PRIMARY KEY, header TEXT NOT NULL, next_seq INTEGER NOT NULL DEFAULT 0)');
    // One row per appended batch: `body` is the batch's events as one JSON array.
    db.run(
      'CREATE TABLE chunks (session TEXT NOT NULL, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session, first_seq))',
    );
  },
  migrations: {},
};

// Version 2 adds each session's summary (session/summary.ts), exact only while the meta row
// `summaries` says 'current' (a clean close wrote them; the first write after open clears it).
const SUMMARIES = 'CREATE TABLE summaries (id TEXT PRIMARY KEY, summary TEXT NOT NULL)';

export const CATALOG_SCHEMA: Schema = {
  kind: 'catalog',
  version: 2,
  create(db) {
    db.run(META);
    db.run('CREATE TABLE sessions (id TEXT PRIMARY KEY, tree TEXT NOT NULL, parent TEXT, header TEXT NOT NULL)');
    db.run('CREATE INDEX sessions_parent ON sessions (parent)');
    db.run(SUMMARIES);
  },
  migrations: {
    1: (db) => db.run(SUMMARIES),
  },
};
