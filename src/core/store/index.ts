export type { Schema } from './db-file';
export { type Quarantine, StoreError, type StoreErrorCode } from './errors';
export { encodeRecord, type ScanResult, scanJournal } from './journal';
export { type DbHooks, JournaledDb, type JournaledDbOptions } from './journaled-db';
export { loadSqlJs, setSqlJsWasmDir } from './sqljs';
export type { StoreStats } from './stats';
export { Store, type StoreOptions } from './store';
