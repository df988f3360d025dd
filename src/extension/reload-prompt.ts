import * as vscode from 'vscode';
import type { SettingKey } from './setting-rules';

/**
 * The settings a harness is wired with when it opens (the `reload` rows of SETTING_RULES: the
 * remote programs, whose tools are part of every request head) apply after a window reload, so
 * a change is said once, with a Reload Window button (issue 21.4, decision 0049). "Once per
 * change": what they resolve to (`read`, e.g. the remote programs as JSON) is compared, so the
 * same value again asks nothing, and neither does a change back to what the harness opened with.
 */
export class ReloadPrompt {
  /** What the open harness was wired with; undefined until it opens (then it reads the settings itself). */
  private wired: string | undefined;
  private asked: string | undefined;
  private readonly asks = new vscode.EventEmitter<readonly SettingKey[]>();
  /** Fired with the settings named each time the prompt is shown (for tests and the log). */
  readonly onDidAsk = this.asks.event;

  constructor(
    private readonly read: () => string,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** The harness opened with what `read` gives now. */
  opened(): void {
    this.wired = this.asked = this.read();
  }

  /** Settings among the reload rows changed: ask for a reload if what they resolve to did. */
  changed(keys: readonly SettingKey[]): void {
    if (this.wired === undefined || keys.length === 0) return;
    const now = this.read();
    if (now === this.asked) return;
    this.asked = now;
    if (now === this.wired) return;
    const named = keys.length === 1 ? `${keys[0]} applies` : keys.length <= 3 ? `${keys.join(', ')} apply` : 'the arbor.remote settings apply';
    this.log.info(`${named} after a window reload (the harness was wired with the earlier values)`);
    this.asks.fire(keys);
    void vscode.window.showInformationMessage(`Arbor: ${named} after a window reload.`, 'Reload Window').then(
      (pick) => pick && vscode.commands.executeCommand('workbench.action.reloadWindow'),
      () => undefined,
    );
  }

  dispose(): void {
    this.asks.dispose();
  }
}
