import * as fs from 'node:fs';
import * as path from 'node:path';
import { withFileLock } from '../store/file-lock';
import type { McpServerConfig } from './config';
import type { McpTrust } from './deployment';
import { type KnownRun, pinOf, type ServerPin, serverFingerprint } from './pins';

// The CLI's one book of what each workspace server may run (decisions 0055, 0112, amended in s55):
// a JSON file in the store folder, keyed by the workspace's real path, then by server name. One
// record per server holds what it ran — its fingerprint, and each part as a digest, so a refusal
// can say which part changed (`pins.ts`) — and whether the user allowed it for good (`arbor mcp
// allow NAME`: it starts on every run). A record without that allow is a pin only: what the first
// `--allow-mcp NAME` started here, the only thing a later `--allow-mcp NAME` may start. An allow
// always pins what it allowed, so one record serves both. Digests and the names of the
// environment's variables or headers only, never a value. Written whole through a temporary file
// and a rename (readers see the old book or the new one), readable only by the user.

/** The book's file in the store folder. */
export const TRUST_BOOK_NAME = 'mcp-trust.json';
/** The two files it replaces, read (never written) while the store has no book yet. */
const OLD_ALLOWS = 'mcp-allowed.json';
const OLD_PINS = 'mcp-pinned.json';

/** What the book holds of one server: what it ran (no parts in an allow kept from before pins), and whether it is allowed for good. */
export interface ServerRecord extends KnownRun {
  /** The user allowed it for good (`arbor mcp allow`); without it, a pin of `--allow-mcp` only. */
  allowed?: true;
}

type Book = Record<string, Record<string, ServerRecord>>;

export class FileTrust implements McpTrust {
  /** The book in the store folder `storeDir`, as it stands for `workspace`'s servers. */
  constructor(
    private readonly storeDir: string,
    private readonly workspace: string,
  ) {}

  get file(): string {
    return path.join(this.storeDir, TRUST_BOOK_NAME);
  }

  /** What the book holds for the server named `name` here, if anything. */
  recordOf(name: string): ServerRecord | undefined {
    return this.read()[this.workspace]?.[name];
  }

  isAllowed(s: McpServerConfig): boolean {
    const r = this.recordOf(s.name);
    return !!r?.allowed && r.fingerprint === serverFingerprint(s);
  }

  allowedBefore(name: string): boolean {
    return !!this.recordOf(name)?.allowed;
  }

  /** `arbor mcp allow`: allowed for good, as it runs now (which pins it too). */
  async allow(s: McpServerConfig): Promise<void> {
    this.put(s.name, { ...pinOf(s), allowed: true });
  }

  /** The first `--allow-mcp NAME` here: what it starts is pinned, not allowed for good. */
  pin(s: McpServerConfig): void {
    this.put(s.name, pinOf(s));
  }

  private put(name: string, record: ServerRecord): void {
    fs.mkdirSync(this.storeDir, { recursive: true });
    // Read, changed and written under a lock between processes: two CLIs allowing or pinning at once
    // must not lose each other's record (a lost pin makes the next `--allow-mcp` a first one).
    const done = withFileLock(
      `${this.file}.lock`,
      () => {
        const book = this.read();
        book[this.workspace] = { ...book[this.workspace], [name]: record };
        const tmp = `${this.file}.${process.pid}.tmp`;
        fs.writeFileSync(tmp, `${JSON.stringify(book, null, 2)}\n`, { mode: 0o600 });
        fs.renameSync(tmp, this.file);
      },
      10_000,
    );
    if (!done)
      throw new Error(
        `MCP_TRUST_BUSY: ${this.file} could not be written: another Arbor process held its lock for 10 s (or ${this.storeDir} is not writable). Try again; if no other arbor runs, delete ${this.file}.lock.`,
      );
  }

  /** The book; while the store has none, the two files it replaces folded into one (the first write keeps the fold). */
  private read(): Book {
    const book = readJson(this.file);
    if (book !== undefined) return recordsOf(book);
    return foldOld(readJson(path.join(this.storeDir, OLD_ALLOWS)) ?? {}, readJson(path.join(this.storeDir, OLD_PINS)) ?? {});
  }
}

/** A JSON object from `file`; undefined when there is none (absent or unreadable: nothing allowed, nothing pinned). */
function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return isObject(v) ? v : {};
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : {};
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One stored record, as the book has it; anything else is no record. */
function recordOf(v: unknown): ServerRecord | undefined {
  if (!isObject(v) || typeof v.fingerprint !== 'string') return undefined;
  const parts = isObject(v.parts) && Object.values(v.parts).every((p) => typeof p === 'string') ? (v.parts as ServerPin['parts']) : undefined;
  const names = Array.isArray(v.names) && v.names.every((n) => typeof n === 'string') ? (v.names as string[]) : undefined;
  return { fingerprint: v.fingerprint, ...(parts && names ? { parts, names } : {}), ...(v.allowed === true ? { allowed: true } : {}) };
}

function recordsOf(raw: Record<string, unknown>): Book {
  const book: Book = {};
  for (const [ws, servers] of Object.entries(raw)) {
    if (!isObject(servers)) continue;
    for (const [name, v] of Object.entries(servers)) {
      const r = recordOf(v);
      if (r) (book[ws] ??= {})[name] = r;
    }
  }
  return book;
}

/**
 * The s54 files as one book: an allow (a fingerprint) with the pin `arbor mcp allow` wrote beside
 * it, an allow from before pins as a whole, a pin alone as a pin. An allow always re-pinned, so a
 * pin that differs from its allow was not written by Arbor: the allow is kept, as what is checked first.
 */
export function foldOld(allows: Record<string, unknown>, pins: Record<string, unknown>): Book {
  const book = recordsOf(pins);
  for (const r of Object.values(book).flatMap((servers) => Object.values(servers))) delete r.allowed;
  for (const [ws, servers] of Object.entries(allows)) {
    if (!isObject(servers)) continue;
    for (const [name, fingerprint] of Object.entries(servers)) {
      if (typeof fingerprint !== 'string') continue;
      const pin = book[ws]?.[name];
      (book[ws] ??= {})[name] = pin?.fingerprint === fingerprint ? { ...pin, allowed: true } : { fingerprint, allowed: true };
    }
  }
  return book;
}

/** The extension's kind: allows kept in a key-value memory (workspaceState), same fingerprints. */
export class MemoryTrust implements McpTrust {
  constructor(
    private readonly get: () => Record<string, string> | undefined,
    private readonly put: (v: Record<string, string>) => Promise<void> | void,
  ) {}

  isAllowed(s: McpServerConfig): boolean {
    return this.get()?.[s.name] === serverFingerprint(s);
  }

  allowedBefore(name: string): boolean {
    return typeof this.get()?.[name] === 'string';
  }

  async allow(s: McpServerConfig): Promise<void> {
    await this.put({ ...this.get(), [s.name]: serverFingerprint(s) });
  }
}
