export { Store, type StoreOptions } from './store';
export { StoreError, type StoreErrorCode, type Quarantine } from './errors';
export { JournaledDb, type Schema, type DbHooks, type JournaledDbOptions } from './journaled-db';
export { scanJournal, encodeRecord, type ScanResult } from './journal';
export { setSqlJsWasmDir, loadSqlJs } from './sqljs';
