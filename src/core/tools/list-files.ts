import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { isPathChanged } from './beneath';
import { displayPath, resolveForRead } from './paths';
import { cancelled, describeIoError, fail, guard, ok } from './result';
import type { Tool, ToolResult } from './tool';
import { joinRel, SKIPPED_DIRS, WalkDir } from './walk';

export interface ListFilesOptions {
  /** Entries returned by one call (default 1000). */
  maxEntries?: number;
  /** Default depth of a recursive listing (default 8). */
  defaultDepth?: number;
}

const NAME = 'list_files';
const MAX_DEPTH = 20;

export function createListFilesTool(options: ListFilesOptions = {}): Tool {
  const maxEntries = options.maxEntries ?? 1000;
  const defaultDepth = Math.min(options.defaultDepth ?? 8, MAX_DEPTH);
  return {
    name: NAME,
    description:
      'List a directory of the workspace, sorted by name: directories end with "/", symbolic links show " -> target". ' +
      'Paths are relative to the workspace root. With recursive, descends into subdirectories ' +
      '(never into .git or node_modules, never through symbolic links).',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'the directory, relative to the workspace root (default ".", the root)' },
        recursive: { type: 'boolean', description: 'also list subdirectories (default false)' },
        depth: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_DEPTH,
          description: `how many directory levels a recursive listing descends (default ${defaultDepth})`,
        },
      },
      additionalProperties: false,
    },
    execute: (args, ctx) =>
      guard(NAME, ctx.signal, async (): Promise<ToolResult> => {
        const r = await resolveForRead(ctx, (args.path as string | undefined) ?? '.');
        if (!r.ok) return fail(r.code, `${NAME}: ${r.message}`);
        const shown = displayPath(r);
        if (r.kind === 'missing') return fail('NOT_FOUND', `${NAME}: '${shown}' does not exist`);
        if (r.kind !== 'directory') return fail('NOT_A_DIRECTORY', `${NAME}: '${shown}' is not a directory; use read_file to read a file`);

        const recursive = args.recursive === true;
        const depth = recursive ? ((args.depth as number | undefined) ?? defaultDepth) : 1;
        const lines: string[] = [];
        const skipped = new Set<string>();
        let truncated = false;
        let depthLimited = false;
        const unreadable: string[] = [];
        // Paths shown relative to the root when inside one, absolute otherwise (full-access).
        const base = r.root ? r.relative : r.realPath;

        // Each folder is opened through the one above it (`WalkDir`): one swapped for a link
        // since it was listed is refused, never followed out of the workspace (decision 0097).
        const walk = async (dir: WalkDir, dirRel: string, level: number): Promise<void> => {
          let entries: Awaited<ReturnType<WalkDir['entries']>>;
          try {
            entries = await dir.entries();
          } catch (e) {
            unreadable.push(`${dirRel}: ${describeIoError(e)}`);
            return;
          }
          for (const entry of entries) {
            if (ctx.signal.aborted || truncated) return;
            const rel = r.root ? joinRel(dirRel, entry.name) : path.join(dirRel, entry.name);
            if (entry.isDirectory() && SKIPPED_DIRS.has(entry.name)) {
              skipped.add(entry.name);
              continue;
            }
            if (lines.length >= maxEntries) {
              truncated = true;
              return;
            }
            if (entry.isSymbolicLink()) {
              let target = '?';
              try {
                target = await fsp.readlink(dir.at(entry.name));
              } catch {
                // Shown as '?': the link exists but cannot be read.
              }
              lines.push(`${rel} -> ${target}`);
            } else if (entry.isDirectory()) {
              lines.push(`${rel}/`);
              if (level < depth) await walkInto(dir, entry.name, rel, level + 1);
              else if (recursive) depthLimited = true;
            } else {
              lines.push(rel);
            }
          }
        };
        const walkInto = async (dir: WalkDir | undefined, name: string, rel: string, level: number): Promise<void> => {
          let sub: WalkDir;
          try {
            sub = dir ? await dir.child(name) : await WalkDir.open(r.realPath, r.root);
          } catch (e) {
            unreadable.push(`${rel}: ${isPathChanged(e) ? 'it became a link while it was listed (the file tools never follow one)' : describeIoError(e)}`);
            return;
          }
          try {
            await walk(sub, rel, level);
          } finally {
            await sub.close();
          }
        };
        await walkInto(undefined, '', base, 1);
        if (ctx.signal.aborted) return cancelled(NAME);

        const notes: string[] = [];
        if (truncated) notes.push(`[Listing cut at ${maxEntries} entries; list a subdirectory, or lower depth.]`);
        if (depthLimited) notes.push(`[Depth limit ${depth} reached: deeper directories were not expanded.]`);
        if (skipped.size) notes.push(`[Not listed: ${[...skipped].sort().join(', ')}.]`);
        if (unreadable.length) notes.push(`[Unreadable: ${unreadable.join('; ')}.]`);
        const body = lines.length ? lines.join('\n') : `(${shown} is empty)`;
        return ok(body + (notes.length ? `\n\n${notes.join('\n')}` : ''));
      }),
  };
}
