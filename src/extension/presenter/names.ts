// Names for people in the host's UI (tab titles, quick picks, dialogs, notices, export
// file names). One rule, `sessionName` in core (label ?? title ?? short fallback), which
// the webview's `nodeName` mirrors (a test holds the two to the same table).
import { sessionName } from '../../core/session/names';
import type { TreeNode } from '../../protocol';

export { distinctName, shortId } from '../../core/session/names';

/** What to call a tree node in one line. */
export function nodeName(node: Pick<TreeNode, 'id' | 'label' | 'title' | 'origin' | 'parentId'>): string {
  return sessionName(node);
}

/**
 * A file name for a session's export: its name in lower case, runs of anything but letters
 * and digits as one dash ("Fork of surveyor (2)" → "fork-of-surveyor-2.jsonl").
 */
export function exportFileName(name: string, ext = 'jsonl'): string {
  const stem = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return `${stem || 'session'}.${ext}`;
}

/** `“name”` for a sentence in a dialog or notice. */
export function quoted(name: string): string {
  return `“${name}”`;
}
