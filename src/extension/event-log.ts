import * as path from 'node:path';
import * as vscode from 'vscode';

// The raw event log documents (`arbor-log:/<id>.jsonl`) follow their session live: each
// appended event schedules one `onDidChange` for that session's open document (coalesced,
// so a streaming turn re-reads the log a few times a second at most, not per event).

export const LOG_SCHEME = 'arbor-log';
const COALESCE_MS = 250;

export const logUri = (id: string): vscode.Uri => vscode.Uri.from({ scheme: LOG_SCHEME, path: `/${id}.jsonl` });
export const logSessionId = (uri: vscode.Uri): string => path.basename(uri.path).replace(/\.jsonl$/, '');

export class EventLogFeed implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /** A session appended an event: refresh its document if one is open. */
  changed(sessionId: string): void {
    if (this.timers.has(sessionId)) return;
    const uri = logUri(sessionId).toString();
    if (!vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri)) return;
    this.timers.set(
      sessionId,
      setTimeout(() => {
        this.timers.delete(sessionId);
        this.emitter.fire(logUri(sessionId));
      }, COALESCE_MS),
    );
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.emitter.dispose();
  }
}

/** Open a session's log, wrapped: one event is one long line, unreadable without wrapping. */
export async function showEventLog(id: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(logUri(id));
  await vscode.window.showTextDocument(doc, { preview: false });
  // Wrap this editor only (a per-document override), unless the user's settings already wrap.
  if (vscode.workspace.getConfiguration('editor', doc).get<string>('wordWrap', 'off') === 'off') {
    await vscode.commands.executeCommand('editor.action.toggleWordWrap');
  }
}
