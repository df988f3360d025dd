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
  private count = 0;

  constructor(
    private readonly answer: (requestId: string, reply: ApprovalReply) => boolean,
    private readonly name: (sessionId: string) => string,
  ) {}

  attach(view: vscode.WebviewView): void {
    this.view = view;
    this.applyBadge();
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
  }

  changed(pending: ApprovalPrompt[], added?: ApprovalPrompt): void {
    this.count = pending.length;
    this.applyBadge();
    if (added && !this.view?.visible) void this.notify(added);
  }

  private applyBadge(): void {
    if (!this.view) return;
    this.view.badge = this.count > 0 ? { value: this.count, tooltip: `${this.count} approval${this.count === 1 ? '' : 's'} waiting in Arbor` } : undefined;
  }

  private async notify(prompt: ApprovalPrompt): Promise<void> {
    const who = this.name(prompt.sessionId);
    const text = `Arbor: ${who} asks to ${prompt.tool}: ${prompt.summary.length > 200 ? `${prompt.summary.slice(0, 200)}…` : prompt.summary}`;
    const choice = await vscode.window.showWarningMessage(text, ALLOW, DENY, SHOW);
    if (choice === ALLOW) this.answer(prompt.requestId, { decision: 'allow' });
    else if (choice === DENY) this.answer(prompt.requestId, { decision: 'deny' });
    else if (choice === SHOW) await vscode.commands.executeCommand('arbor.chat.focus');
  }
}
