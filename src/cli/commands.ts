import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeError } from '../core/errors';
import { StoreError } from '../core/store/errors';
import { loadSqlJs, setSqlJsWasmDir } from '../core/store/sqljs';
import { type ParsedArgs, UsageError } from './args';
import type { Command, Io } from './output';

/**
 * Every subcommand, loaded when it runs (decision 0068): `arbor log` never loads the model
 * client, `arbor run` never loads the ACP server, and nothing but `arbor acp` initialises the
 * ACP SDK's schemas. One row per command; a new command adds a row and a file.
 */
export const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => (await import('./run')).run,
  send: async () => (await import('./run')).send,
  sessions: async () => (await import('./store-commands')).sessions,
  log: async () => (await import('./store-commands')).log,
  rewind: async () => (await import('./rewind')).rewindCommand,
  goal: async () => (await import('./goal')).goal,
  acp: async () => (await import('./acp')).acpCommand,
  // Listing and allowing servers never calls the model: no API key needed.
  mcp: async () => (await import('./mcp')).mcpCommand((await import('./keyless')).keylessHarness('mcp')),
  // Worktrees are git and the store: no model, no API key needed.
  worktree: async () => (await import('./worktree')).worktreeCommand((await import('./keyless')).keylessHarness('worktree')),
  // A folder whose `.arbor` or `.claude` a command made, reviewed by the user (decision 0111).
  trust: async () => (await import('./trust')).trustCommand,
};

/** The names `arbor` accepts, in the order `--help` and the unknown-command message list them. */
export const COMMAND_NAMES = Object.keys(COMMANDS);

/**
 * Runs one command and turns what it throws into the exit code (2 bad usage, 1 failed). This
 * lives beside the commands, not in main.ts: under esbuild the launcher and the commands are two
 * bundles, and an error class is only `instanceof` its own bundle's copy.
 */
export async function dispatch(name: string, args: ParsedArgs, io: Io): Promise<number> {
  // The bundle in dist/ has sql.js's WASM beside it (the compiled tree resolves the package's own).
  if (fs.existsSync(path.join(__dirname, 'sql-wasm.wasm'))) setSqlJsWasmDir(__dirname);
  // Every command opens the store: sql.js's WebAssembly compiles on V8's worker threads while
  // this thread initialises the command's modules (decision 0085). Its failure is the store's to report.
  loadSqlJs().catch(() => undefined);
  try {
    const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
    if (!load) throw new UsageError(`Unknown command "${name}". Commands: ${COMMAND_NAMES.join(', ')}.`);
    return await (await load())(args, io);
  } catch (err) {
    return failure(err, io);
  }
}

/** What an error means for the exit code, said on stderr. */
export function failure(err: unknown, io: Io): number {
  if (err instanceof UsageError) {
    io.err(`arbor: ${err.message}\nRun 'arbor --help' for usage.`);
    return 2;
  }
  if (err instanceof StoreError && (err.code === 'LOCKED' || err.code === 'NO_STORE')) {
    io.err(`arbor: ${err.message}`);
    return 2;
  }
  io.err(`arbor: ${describeError(err)}`);
  return 1;
}
