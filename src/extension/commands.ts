import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { ArborHost } from './host';
import { showEventLog } from './event-log';
import { pickPolicy } from './policy-picker';

/** What `webview/context` menus pass: the `data-vscode-context` of the node or message. */
export interface CommandArgs {
  arborSessionId?: string;
  arborSeq?: number;
  /** Which webview the menu was opened in (chat messages): the fork opens where the button would open it. */
  arborView?: 'panel' | 'transcript';
}

type Command = (args?: CommandArgs) => Promise<void>;

/** Ask for a session when the command came from the palette (no context argument). */
async function pickSession(host: ArborHost, args: CommandArgs | undefined, title: string, filter?: (s: { running: boolean; compactable: boolean }) => boolean): Promise<string | undefined> {
  if (args?.arborSessionId) return args.arborSessionId;
  const list = (await host.controller.sessions()).filter(filter ?? (() => true));
  if (list.length === 0) {
    void vscode.window.showInformationMessage(filter ? 'Arbor: no session fits (none is running, or none can be compacted?).' : 'Arbor: there are no sessions yet; start a conversation in the Arbor panel.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    list.map((s) => ({ label: s.label, description: s.id, detail: s.running ? 'running' : undefined, id: s.id })),
    { title, matchOnDescription: true },
  );
  return pick?.id;
}

/** Every Arbor command, one handler each (a map, not a switch). */
export function buildCommands(host: ArborHost): Record<string, Command> {
  const c = host.controller;
  return {
    'arbor.newConversation': async () => {
      // Nothing is stored until the first message (which titles the conversation).
      await vscode.commands.executeCommand('arbor.chat.focus');
      c.newDraft();
    },
    'arbor.fork': async (args) => {
      const id = await pickSession(host, args, 'Fork which conversation?');
      if (!id) return;
      const seq = args?.arborSeq ?? (await c.events(id)).length - 1;
      await c.forkAndShow(id, seq, args?.arborView === 'transcript' ? 'transcript' : 'panel');
    },
    'arbor.sendMessage': async (args) => {
      const id = await pickSession(host, args, 'Send a message to which agent?');
      if (!id) return;
      const text = await vscode.window.showInputBox({ title: `Message to ${id}`, prompt: 'Queued after its current work; a settled subagent is resumed from its log.' });
      if (text) await c.send(id, text);
    },
    'arbor.interrupt': async (args) => {
      const id = await pickSession(host, args, 'Interrupt which agent?', (s) => s.running);
      if (id) await c.interrupt(id);
    },
    'arbor.openTranscript': async (args) => {
      const id = await pickSession(host, args, 'Open the transcript of which session?');
      if (id) host.openTranscript(id);
    },
    'arbor.openEventLog': async (args) => {
      const id = await pickSession(host, args, 'Open the raw event log of which session?');
      if (!id) return;
      await showEventLog(id);
    },
    'arbor.setApiKey': async () => {
      const key = await vscode.window.showInputBox({ title: 'Arbor: API key', prompt: 'Stored in VS Code SecretStorage; never in settings, logs or sessions.', password: true, ignoreFocusOut: true });
      if (key === undefined) return;
      await host.setApiKey(key.trim());
      void vscode.window.showInformationMessage(key.trim() ? 'Arbor: API key saved.' : 'Arbor: API key cleared.');
    },
    'arbor.setSandbox': async (args) => {
      await pickPolicy(host, args?.arborSessionId ?? c.selectedSession);
    },
    'arbor.exportSession': async (args) => {
      const id = await pickSession(host, args, 'Export which session as JSON Lines?');
      if (!id) return;
      const target = await vscode.window.showSaveDialog({ defaultUri: vscode.Uri.file(`${id}.jsonl`), filters: { 'JSON Lines': ['jsonl'] } });
      if (!target) return;
      await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Exporting ${id}…` }, async () => {
        const events = await c.events(id);
        await fs.promises.writeFile(target.fsPath, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
      });
      void vscode.window.showInformationMessage(`Arbor: exported ${id} to ${target.fsPath}.`);
    },
    'arbor.deleteSession': async (args) => {
      const id = await pickSession(host, args, 'Delete which session (and its subagents)?');
      if (!id) return;
      const ok = await vscode.window.showWarningMessage(`Delete session ${id} and all its subagents? This cannot be undone.`, { modal: true }, 'Delete');
      if (ok !== 'Delete') return;
      const ids = await c.deleteSession(id);
      void vscode.window.showInformationMessage(`Arbor: deleted ${ids.length} session(s).`);
    },
    'arbor.compact': async (args) => {
      const id = await pickSession(host, args, 'Compact which conversation?', (s) => s.compactable);
      if (!id) return;
      const text = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Compacting ${id}…` }, () => c.compact(id));
      void vscode.window.showInformationMessage(`Arbor: ${text}`);
    },
    'arbor.copyId': async (args) => {
      const id = await pickSession(host, args, 'Copy the id of which session?');
      if (id) await vscode.env.clipboard.writeText(id);
    },
    'arbor.focusInput': async () => {
      await vscode.commands.executeCommand('arbor.chat.focus');
      c.focusInput();
    },
  };
}
