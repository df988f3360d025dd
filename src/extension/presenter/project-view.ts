import * as os from 'node:os';
import * as path from 'node:path';
import type { ProjectSnapshot } from '../../core/project/project-files';
import type { ProjectFilesView } from '../../protocol';

/** A path as the panel shows it: workspace-relative, "~/…" under the home folder, else absolute. */
export function shownPath(p: string, root: string, home = os.homedir()): string {
  const rel = path.relative(root, p);
  if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).join('/');
  const inHome = path.relative(home, p);
  if (inHome && !inHome.startsWith('..') && !path.isAbsolute(inHome)) return `~/${inHome.split(path.sep).join('/')}`;
  return p;
}

/** The core's snapshot of the project files, for the panel (decision 0056). */
export function projectView(s: ProjectSnapshot, root: string, home?: string): ProjectFilesView {
  const shown = (p: string) => shownPath(p, root, home);
  return {
    instructions: s.instructions.map((f) => ({ path: shown(f.path), level: f.level, bytes: f.bytes, included: f.included })),
    skipped: s.skipped.map((k) => ({ path: shown(k.path), why: k.why })),
    cutBytes: s.cutBytes,
    maxBytes: s.maxBytes,
    agents: s.agents.map((a) => ({
      name: a.name,
      description: a.description,
      path: shown(a.file),
      ...(a.tools ? { tools: a.tools } : {}),
      ...(a.model ? { model: a.model } : {}),
      ...(a.sandbox ? { sandbox: a.sandbox as ProjectFilesView['agents'][number]['sandbox'] } : {}),
    })),
    errors: s.errors.map((e) => ({ path: shown(e.file), line: e.line, message: e.message })),
  };
}
