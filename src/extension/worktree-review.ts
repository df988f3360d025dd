import * as vscode from 'vscode';
import type { FileChange } from '../core/worktree/diff';

// "Review changes" on a worktree child (decision 0060): its files in VS Code's multi-file diff
// editor (`vscode.changes`), base on the left, the child's on the right, both read-only documents
// of the `arbor-worktree:` scheme served from what `harness.worktrees.diff` read out of git —
// the parent's files are never opened for writing. Where `vscode.changes` is missing, the
// first file opens in `vscode.diff`.

export const WORKTREE_SCHEME = 'arbor-worktree';

/** The documents of the reviews opened in this window (a review replaces its session's). */
const documents = new Map<string, string>();
let provider: vscode.Disposable | undefined;
const changed = new vscode.EventEmitter<vscode.Uri>();

function ensureProvider(): void {
  provider ??= vscode.workspace.registerTextDocumentContentProvider(WORKTREE_SCHEME, {
    onDidChange: changed.event,
    provideTextDocumentContent: (uri) => documents.get(uri.toString()) ?? '',
  });
}

/** Forget the documents and the provider (the host is going). */
export function disposeWorktreeReviews(): void {
  provider?.dispose();
  provider = undefined;
  documents.clear();
}

// The path is the file's own (what the editor shows); which review and which side are in the query.
function side(sessionId: string, which: 'base' | 'child', file: FileChange, text: string | undefined): vscode.Uri {
  const uri = vscode.Uri.from({ scheme: WORKTREE_SCHEME, path: `/${file.path}`, query: new URLSearchParams({ session: sessionId, side: which }).toString() });
  documents.set(uri.toString(), file.binary ? '(a binary file: compare it with git)' : (text ?? ''));
  changed.fire(uri);
  return uri;
}

/** Open the diff editor on a child's changes; returns how many files it shows. */
export async function openWorktreeReview(sessionId: string, name: string, files: readonly FileChange[]): Promise<number> {
  if (files.length === 0) {
    void vscode.window.showInformationMessage(`Arbor: “${name}” changed no files in its worktree.`);
    return 0;
  }
  ensureProvider();
  for (const k of [...documents.keys()]) if (vscode.Uri.parse(k).query.includes(`session=${encodeURIComponent(sessionId)}&`)) documents.delete(k);
  const triples = files.map((f) => {
    const after = side(sessionId, 'child', f, f.after);
    return [after, side(sessionId, 'base', f, f.before), after] as const;
  });
  const title = `${name}: changes in its worktree`;
  try {
    await vscode.commands.executeCommand('vscode.changes', title, triples);
  } catch {
    const [, base, after] = triples[0];
    await vscode.commands.executeCommand('vscode.diff', base, after, `${name}: ${files[0].path} (base ↔ worktree)`);
  }
  return files.length;
}
