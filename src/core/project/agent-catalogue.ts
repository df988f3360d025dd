import * as fs from 'node:fs';
import * as path from 'node:path';
import { type AgentDefinition, type AgentFileError, type AgentOrigin, isAgentFileError, parseAgentFile } from './agent-file';
import { changedWhileRead, openInside, realOr } from './within-root';

/** Where agent files are looked for, nearest first: the first definition of a name wins. */
export interface AgentFolders {
  root: string;
  /** The user's own folder (e.g. ~/.arbor/agents); none when absent. */
  userDir?: string;
}

export interface AgentCatalogue {
  /** Sorted by name: the catalogue's bytes do not depend on the order a folder lists its files in. */
  agents: AgentDefinition[];
  /** Files that are not agents, and why; the others load regardless. */
  errors: AgentFileError[];
}

/** An agent file larger than this is an error, not a persona. */
export const MAX_AGENT_FILE_BYTES = 64 * 1024;

/** Bytes of the catalogue's `- name: description` lines, which go into every agent's system prompt (as the instructions' 32 KiB, decision 0056). */
export const MAX_CATALOGUE_BYTES = 32 * 1024;

/** The line an agent takes in the catalogue the model sees (`catalogueText`). */
export const catalogueLine = (a: Pick<AgentDefinition, 'name' | 'description'>): string => `- ${a.name}: ${a.description}`;

export function agentFolders(f: AgentFolders): { dir: string; origin: AgentOrigin }[] {
  return [
    { dir: path.join(f.root, '.arbor', 'agents'), origin: 'workspace' },
    { dir: path.join(f.root, '.claude', 'agents'), origin: 'claude' },
    ...(f.userDir ? [{ dir: f.userDir, origin: 'user' as const }] : []),
  ];
}

/** The `.md` files of a folder, sorted (none when it does not exist). */
export function agentFilesIn(dir: string): string[] {
  // Asked before every turn (project-files.ts): a folder that is not there is the usual case,
  // and a failed readdir costs an exception (~9 µs) where a look costs ~1.
  if (!fs.existsSync(dir)) return [];
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.md'))
    .sort()
    .map((n) => path.join(dir, n));
}

export function readAgentCatalogue(f: AgentFolders): AgentCatalogue {
  const byName = new Map<string, AgentDefinition>();
  const errors: AgentFileError[] = [];
  const realRoot = realOr(f.root);
  for (const { dir, origin } of agentFolders(f)) {
    for (const file of agentFilesIn(dir)) {
      // A workspace's agent file must really be in the workspace (as AGENTS.md must, decision 0056):
      // a link to a file elsewhere (another project's agent, the user's private ones) is not read.
      const def = readOne(file, origin, realRoot);
      if (isAgentFileError(def)) {
        errors.push(def);
        continue;
      }
      const first = byName.get(def.name);
      if (first) {
        errors.push({ file, line: 1, message: `agent "${def.name}" is already defined in ${first.file}; this file is ignored (rename one of them)` });
        continue;
      }
      byName.set(def.name, def);
    }
  }
  // The catalogue rides in every request: capped, the user's own agents first, then the
  // workspace's in the order read; an agent past the cap is an error (the panel lists it).
  const rank: Record<AgentOrigin, number> = { user: 0, workspace: 1, claude: 2 };
  const kept: AgentDefinition[] = [];
  let bytes = 0;
  for (const def of [...byName.values()].sort((a, b) => rank[a.origin] - rank[b.origin])) {
    const line = Buffer.byteLength(catalogueLine(def)) + 1;
    if (bytes + line > MAX_CATALOGUE_BYTES) {
      errors.push({
        file: def.file,
        line: 1,
        message: `left out: the catalogue of agents is capped at ${MAX_CATALOGUE_BYTES} bytes (it is in every request), and this agent's line would go past it; shorten the descriptions or remove agents`,
      });
      continue;
    }
    bytes += line;
    kept.push(def);
  }
  return { agents: kept.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)), errors };
}

const outside = (file: string): AgentFileError => ({
  file,
  line: 1,
  message: 'it links outside the workspace, so it is not read; copy the agent into the workspace (or into your own agents folder) instead',
});

/** One agent file, read from one open: a workspace's only where it really is inside (`openInside`), a link swapped in after the check refused. */
function readOne(file: string, origin: AgentOrigin, realRoot: string): AgentDefinition | AgentFileError {
  let fd: number | 'outside';
  try {
    fd = origin === 'user' ? fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0)) : openInside(realRoot, file);
  } catch (err) {
    if (changedWhileRead(err))
      return { file, line: 1, message: 'it became a link while it was read (something in the workspace is swapping it), so it was not read' };
    return { file, line: 1, message: `could not be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
  if (fd === 'outside') return outside(file);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { file, line: 1, message: 'not a regular file' };
    if (st.size > MAX_AGENT_FILE_BYTES) return { file, line: 1, message: `the file is ${st.size} bytes; an agent file may be at most ${MAX_AGENT_FILE_BYTES}` };
    return parseAgentFile(file, fs.readFileSync(fd, 'utf8'), origin);
  } catch (err) {
    return { file, line: 1, message: `could not be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  } finally {
    fs.closeSync(fd);
  }
}
