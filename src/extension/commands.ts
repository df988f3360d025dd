import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { parseBudgetText } from '../core/session/budget';
import { type CommandArgs, type CommandId, isCompactable, ownsGoals, type TreeNode } from '../protocol';
import type { CommandHost } from './command-host';
import { showEventLog } from './event-log';
import { pickPolicy } from './policy-picker';
import { exportFileName, quoted } from './presenter/names';
import { countUnder, isSessionNode, sessionPicks } from './presenter/session-picks';
import { runNodeId } from './presenter/workflow-runs';
import { readSettings } from './settings';

export type { CommandArgs } from '../protocol';

export type Command = (args?: CommandArgs) => Promise<void>;

/**
 * Ask for a session when the command came from the palette (no context argument): every
 * session by name, in tree order, indented by nesting, with its status. Workflow run nodes
 * (`wf.<runId>`) are drawn in the tree but are no session: only Open Transcript, which opens a
 * run's own tab, offers them (`runs`); the other pickers never do (their agents, hung under
 * them, are offered).
 */
async function pickSession(
  host: CommandHost,
  args: CommandArgs | undefined,
  title: string,
  filter?: (s: TreeNode) => boolean,
  runs = false,
): Promise<string | undefined> {
  if (args?.arborSessionId) return args.arborSessionId;
  if (runs && args?.arborRunId) return runNodeId(args.arborRunId);
  const items = sessionPicks(await host.controller.nodes(), (n) => (runs || isSessionNode(n)) && (!filter || filter(n)));
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      filter ? 'Arbor: no session fits (none is running?).' : 'Arbor: there are no sessions yet; start a conversation in the Arbor panel.',
    );
    return undefined;
  }
  // ignoreFocusOut: run from the palette while a transcript tab (a webview) had the focus, the
  // workbench hands the focus back to that webview a moment after the palette closes — after
  // this pick has opened — and a pick that closes on focus-out vanishes unanswered.
  const pick = await vscode.window.showQuickPick(items, { title, matchOnDescription: true, ignoreFocusOut: true });
  return pick?.id;
}

/** The session's name for a title or sentence; its id when it cannot be read. */
function nameOf(host: CommandHost, id: string): Promise<string> {
  return host.controller.nameOf(id).catch(() => id);
}

/** Where an export is proposed: the first workspace folder, else the home folder (never the filesystem root). */
function exportTarget(fileName: string): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  return folder ? vscode.Uri.joinPath(folder, fileName) : vscode.Uri.file(path.join(os.homedir(), fileName));
}

/** Set / Pause / Resume / Clear Goal: human actions (set and resume arm the goal in this window). */
function goalCommands(host: CommandHost): Record<'arbor.setGoal' | 'arbor.pauseGoal' | 'arbor.resumeGoal' | 'arbor.clearGoal' | 'arbor.setBudget', Command> {
  const c = host.controller;
  return {
    'arbor.setGoal': async (args) => {
      const id = await pickSession(host, args, 'Set a goal on which conversation?', ownsGoals);
      if (!id) return;
      const name = await nameOf(host, id);
      const objective = await vscode.window.showInputBox({
        title: `Goal for ${name}`,
        prompt: 'What should this conversation achieve? It works on it round by round while the goal is armed.',
        ignoreFocusOut: true,
      });
      if (!objective?.trim()) return;
      const fallback = readSettings().goalMaxRounds;
      const rounds = await vscode.window.showInputBox({
        title: `Round limit for ${name}`,
        prompt: 'At most this many rounds start by themselves (1-1000); then the goal blocks until you raise the limit.',
        value: String(fallback),
        validateInput: (v) => (/^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 1000 ? undefined : 'A whole number from 1 to 1000'),
        ignoreFocusOut: true,
      });
      if (rounds === undefined) return;
      await c.goals.set(id, objective, Number(rounds.trim()));
    },
    'arbor.setBudget': async (args) => {
      const id = await pickSession(host, args, 'Set the budget of which session (it covers everything it delegates)?');
      if (!id) return;
      const name = await nameOf(host, id);
      const node = (await host.controller.nodes()).find((n) => n.id === id);
      const now = node?.budget;
      const text = await vscode.window.showInputBox({
        title: `Budget for ${name} and everything it delegates`,
        prompt: 'Tokens (50000, 50k, 1.5M) and/or dollars ($2), e.g. "200k, $1.50"; "none" removes it. Raising it resumes nothing: send a message to go on.',
        value: now
          ? [now.maxTokens !== undefined ? String(now.maxTokens) : '', now.maxCostUsd !== undefined ? `$${now.maxCostUsd}` : ''].filter(Boolean).join(', ')
          : '',
        validateInput: (v) => {
          try {
            parseBudgetText(v);
            return undefined;
          } catch (err) {
            return err instanceof Error ? err.message : String(err);
          }
        },
        ignoreFocusOut: true,
      });
      if (text === undefined) return;
      await c.setBudget(id, parseBudgetText(text));
    },
    'arbor.pauseGoal': async (args) => {
      const id = await pickSession(host, args, 'Pause the goal of which conversation?', (n) => n.goal?.phase === 'active' || n.goal?.phase === 'blocked');
      if (id) await c.goals.pause(id);
    },
    'arbor.resumeGoal': async (args) => {
      const id = await pickSession(host, args, 'Resume the goal of which conversation?', (n) => !!n.goal && n.goal.phase !== 'complete');
      if (id) await c.goals.resume(id);
    },
    'arbor.clearGoal': async (args) => {
      const id = await pickSession(host, args, 'Clear the goal of which conversation?', (n) => !!n.goal);
      if (id) await c.goals.clear(id);
    },
  };
}

/** Every Arbor command, one handler each (a map, not a switch). */
export function buildCommands(host: CommandHost): Record<CommandId, Command> {
  const c = host.controller;
  return {
    'arbor.newConversation': async () => {
      // Nothing is stored until the first message (which titles the conversation).
      await vscode.commands.executeCommand('arbor.chat.focus');
      c.newDraft();
    },
    'arbor.startAgent': async () => {
      const agents = await c.agents();
      if (agents.length === 0) {
        void vscode.window.showInformationMessage(
          'Arbor: no agents are defined in files. Add one as .arbor/agents/<name>.md (frontmatter name, description, tools), or in .claude/agents.',
        );
        return;
      }
      const pick = await vscode.window.showQuickPick(
        agents.map((a) => ({ label: a.name, description: a.description, detail: a.path, name: a.name })),
        { title: 'Start a conversation with which agent?', matchOnDescription: true, ignoreFocusOut: true },
      );
      if (!pick) return;
      await vscode.commands.executeCommand('arbor.chat.focus');
      await c.startAgent(pick.name);
    },
    'arbor.fork': async (args) => {
      const id = await pickSession(host, args, 'Fork which conversation?');
      if (!id) return;
      const seq = args?.arborSeq ?? (await c.events(id)).length - 1;
      const fork = await c.forkAndShow(id, seq, args?.arborView === 'transcript' ? 'transcript' : 'panel');
      void vscode.window.showInformationMessage(`Arbor: forked ${quoted(await nameOf(host, id))} into ${quoted(await nameOf(host, fork))}.`);
    },
    // From a message's context menu only (hidden in the palette): the view shows the rewind's steps and preview.
    'arbor.rewind': async (args) => {
      if (!args?.arborSessionId || args.arborSeq === undefined) return;
      c.openRewind(args.arborSessionId, args.arborSeq, args.arborView === 'transcript' ? 'transcript' : 'panel');
    },
    'arbor.tryWays': async (args) => {
      const id = await pickSession(host, args, 'Try several ways from which conversation?', (n) => n.origin !== 'subagent');
      if (!id) return;
      const seq = args?.arborSeq ?? (await c.events(id)).length - 1;
      const { ways } = await c.tryWays(id, seq);
      if (ways.length)
        void vscode.window.showInformationMessage(`Arbor: trying ${ways.length} ways from ${quoted(await nameOf(host, id))}, each in its own worktree.`);
    },
    // Decision 0074: a task for this node, run on a configured placement as its continuable child.
    'arbor.runOnPlacement': async (args) => {
      const names = await c.placements();
      if (names.length === 0) {
        void vscode.window.showInformationMessage(
          'Arbor: no placements are configured. Add one (a host over ssh, or a container) to arbor.placements, then run a task there from a node.',
        );
        return;
      }
      const id = await pickSession(host, args, 'Run a task on a placement under which conversation?');
      if (!id) return;
      const placement = await vscode.window.showQuickPick(names, { title: 'Run it on which placement?' });
      if (!placement) return;
      const prompt = await vscode.window.showInputBox({
        title: `A task for ${await nameOf(host, id)}, on ${placement}`,
        prompt: "It runs there in its own git worktree; its changes come back for review like a worktree child's.",
      });
      if (!prompt?.trim()) return;
      await c.runOnPlacement(id, placement, prompt);
    },
    'arbor.sendMessage': async (args) => {
      const id = await pickSession(host, args, 'Send a message to which agent?');
      if (!id) return;
      const text = await vscode.window.showInputBox({
        title: `Message to ${await nameOf(host, id)}`,
        prompt: 'Queued after its current work; a settled subagent is resumed from its log.',
      });
      if (text) await c.send(id, text);
    },
    'arbor.interrupt': async (args) => {
      // A node that runs, or waits for children that do: its whole subtree stops.
      const id = await pickSession(host, args, 'Stop which agent (and the subagents under it)?', (n) => n.status === 'running' || n.status === 'waiting');
      if (!id) return;
      const stopped = await c.interrupt(id);
      if (stopped.length > 1)
        void vscode.window.showInformationMessage(`Arbor: stopped ${quoted(await nameOf(host, id))} and ${stopped.length - 1} subagent(s) under it.`);
    },
    'arbor.cancelWorkflow': async (args) => {
      let runId = args?.arborRunId;
      if (!runId) {
        const runs = (await c.nodes()).filter((n) => n.kind === 'workflow' && n.workflow?.status === 'running');
        if (runs.length === 0) return void vscode.window.showInformationMessage('Arbor: no workflow is running.');
        const pick = await vscode.window.showQuickPick(
          runs.map((n) => ({
            label: n.workflow!.name,
            description: `${n.workflow!.running} running · ${n.workflow!.agents} agents`,
            runId: n.workflow!.runId,
          })),
          { title: 'Cancel which workflow?', ignoreFocusOut: true },
        );
        runId = pick?.runId;
      }
      if (runId) await c.cancelWorkflow(runId);
    },
    'arbor.openTranscript': async (args) => {
      const id = await pickSession(host, args, 'Open the transcript of which session (or workflow run)?', undefined, true);
      if (id) host.openTranscript(id);
    },
    'arbor.openEventLog': async (args) => {
      const id = await pickSession(host, args, 'Open the raw event log of which session?');
      if (!id) return;
      await showEventLog(id);
    },
    'arbor.setApiKey': async () => {
      const key = await vscode.window.showInputBox({
        title: 'Arbor: API key',
        prompt: 'Stored in VS Code SecretStorage; never in settings, logs or sessions.',
        password: true,
        ignoreFocusOut: true,
      });
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
      const name = await nameOf(host, id);
      const target = await vscode.window.showSaveDialog({
        defaultUri: exportTarget(exportFileName(name)),
        filters: { 'JSON Lines': ['jsonl'] },
        title: `Export ${name} (${id})`,
      });
      if (!target) return;
      await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Exporting ${name}…` }, async () => {
        const events = await c.events(id);
        await fs.promises.writeFile(target.fsPath, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
      });
      void vscode.window.showInformationMessage(`Arbor: exported ${quoted(name)} to ${target.fsPath}.`);
    },
    'arbor.deleteSession': async (args) => {
      const id = await pickSession(host, args, 'Delete which session (and its subagents)?');
      if (!id) return;
      const nodes = await c.nodes();
      const under = countUnder(nodes, id);
      const what = under > 0 ? ` and the ${under} session${under === 1 ? '' : 's'} under it (subagents and forks)` : '';
      const ok = await vscode.window.showWarningMessage(
        `Delete ${quoted(await nameOf(host, id))}${what}? This cannot be undone.`,
        { modal: true, detail: `Session id: ${id}` },
        'Delete',
      );
      if (ok !== 'Delete') return;
      const ids = await c.deleteSession(id);
      void vscode.window.showInformationMessage(`Arbor: deleted ${ids.length} session(s).`);
    },
    'arbor.compact': async (args) => {
      const id = await pickSession(host, args, 'Compact which conversation?', isCompactable);
      if (!id) return;
      const text = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Compacting ${await nameOf(host, id)}…` }, () =>
        c.compact(id),
      );
      void vscode.window.showInformationMessage(`Arbor: ${text}`);
    },
    'arbor.copyId': async (args) => {
      const id = await pickSession(host, args, 'Copy the id of which session?');
      if (id) await vscode.env.clipboard.writeText(id);
    },
    ...goalCommands(host),
    'arbor.focusInput': async () => {
      await vscode.commands.executeCommand('arbor.chat.focus');
      c.focusInput();
    },
  };
}
