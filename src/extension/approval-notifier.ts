import * as vscode from 'vscode';
import type { ApprovalReply } from '../core/policy/approval';
import type { ApprovalPrompt } from '../protocol';

const ALLOW = 'Allow Once';
const DENY = 'Deny';
const SHOW = 'Show in Arbor';

/**
 * Approvals you cannot miss: the Arbor view's badge counts the pending requests (VS Code
 * shows it on the activity-bar icon), and a request that arrives while the panel is not
 * visible raises a notification whose buttons answer it or reveal the panel. Allowing for
 * the whole conversation, a reason for a denial and the diff need the card, so "Show" opens it.
 */
export class ApprovalNotifier {
  private view: vscode.WebviewView | undefined;
  private pending: ApprovalPrompt[] = [];
  /** Requests already notified: one notification per request, however often the view hides. */
  private readonly notified = new Set<string>();

  constructor(
    private readonly answer: (requestId: string, reply: ApprovalReply) => boolean,
    private readonly name: (sessionId: string) => string,
  ) {}

  attach(view: vscode.WebviewView): void {
    this.view = view;
    this.applyBadge();
    // Hidden while a request waits (the user switched to the Explorer): say so now.
    view.onDidChangeVisibility(() => {
      if (!view.visible) this.notifyPending();
    });
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
      this.notifyPending();
    });
  }

  changed(pending: ApprovalPrompt[], added?: ApprovalPrompt): void {
    this.pending = pending;
    for (const id of [...this.notified]) if (!pending.some((p) => p.requestId === id)) this.notified.delete(id);
    this.applyBadge();
    if (added && !this.view?.visible) this.notifyPending();
  }

  private applyBadge(): void {
    if (!this.view) return;
    const n = this.pending.length;
    this.view.badge = n > 0 ? { value: n, tooltip: `${n} approval${n === 1 ? '' : 's'} waiting in Arbor` } : undefined;
  }

  private notifyPending(): void {
    for (const p of this.pending) {
      if (this.notified.has(p.requestId)) continue;
      this.notified.add(p.requestId);
      void this.notify(p);
    }
  }

  private async notify(prompt: ApprovalPrompt): Promise<void> {
    const who = this.name(prompt.sessionId);
    const what = prompt.summary.length > 200 ? `${prompt.summary.slice(0, 200)}…` : prompt.summary;
    const text = `Arbor: "${who}" asks for approval: ${what}`;
    const choice = await vscode.window.showWarningMessage(text, ALLOW, DENY, SHOW);
    if (choice === ALLOW) this.answer(prompt.requestId, { decision: 'allow' });
    else if (choice === DENY) this.answer(prompt.requestId, { decision: 'deny' });
    else if (choice === SHOW) await vscode.commands.executeCommand('arbor.chat.focus');
  }
}
