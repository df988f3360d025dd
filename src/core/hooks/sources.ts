import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HookSource } from '../session/events';
import { type ParsedHooks, parseHooksSettings } from './schema';

// Where hooks are configured (decision 0057): the user's own settings file, the workspace's
// `.arbor/settings.json`, and — behind a setting, as Claude Code users keep theirs there — the
// workspace's `.claude/settings.json` and `.claude/settings.local.json`. Read once, when the
// hooks are loaded (a snapshot, as Claude Code takes one at start): an edit applies at the next
// reload, so nothing an agent writes mid-session changes which commands run.

export interface HookFiles {
  /** The workspace folder hooks run in and whose settings files are read. */
  workspaceRoot: string;
  /** The user-level settings file (default `~/.arbor/settings.json`). */
  userFile?: string;
  /** Read hooks from `.claude/settings.json` (and `.local.json`) too. */
  readClaudeSettings?: boolean;
}

/** The files read, in order, with the source each counts as. */
export function hookFiles(f: HookFiles): { file: string; source: HookSource }[] {
  const ws = (...p: string[]) => path.join(f.workspaceRoot, ...p);
  return [
    ...(f.userFile ? [{ file: f.userFile, source: 'user' as const }] : []),
    { file: ws('.arbor', 'settings.json'), source: 'workspace' as const },
    ...(f.readClaudeSettings
      ? [
          { file: ws('.claude', 'settings.json'), source: 'claude' as const },
          { file: ws('.claude', 'settings.local.json'), source: 'claude' as const },
        ]
      : []),
  ];
}

/** Every hook of every file that exists; a file that cannot be read is a problem, one that is absent is not. */
export function loadHooks(f: HookFiles): ParsedHooks {
  const out: ParsedHooks = { hooks: [], problems: [] };
  for (const { file, source } of hookFiles(f)) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        out.problems.push(`${file}: could not be read (${(err as Error).message}); its hooks are not loaded.`);
      continue;
    }
    const parsed = parseHooksSettings(text, file, source);
    out.hooks.push(...parsed.hooks);
    out.problems.push(...parsed.problems);
  }
  return out;
}
