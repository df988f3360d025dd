import * as vscode from 'vscode';
import { effectiveApproval } from '../core/policy/approval';
import { effectiveSandbox, RESTRICTED_CEILING } from '../core/policy/sandbox';
import { policyOverrides } from '../core/session/folds';
import type { ApprovalPolicy, SandboxMode } from '../protocol';
import type { CommandHost } from './command-host';
import { userPolicy, widerThan } from './policy-settings';

// The sandbox / approval picker (`arbor.setSandbox`, and the mode indicator beside the chat
// input). It marks what is in force now and asks where a choice should apply: this session
// (its log), all sessions (user setting) or this workspace (.vscode/settings.json). Only the
// last writes into the workspace folder, and only when the user picks it (decision 0015); it is
// offered only for a choice no wider than the user's own setting, since a workspace's value can
// only narrow it (decision 0125, amended).

type Choice = { kind: 'sandbox'; value: SandboxMode } | { kind: 'approval'; value: ApprovalPolicy };
type ModeItem = vscode.QuickPickItem & { choice?: Choice };
type Scope = 'session' | 'user' | 'workspace';
type ScopeItem = vscode.QuickPickItem & { scope: Scope };

const SANDBOX: { value: SandboxMode; detail: string }[] = [
  { value: 'read-only', detail: 'Nothing is written; commands run in the OS sandbox with the file system read-only and no network.' },
  { value: 'workspace-write', detail: 'Writes inside the workspace folders (not .git, .vscode, .arbor); commands run in the OS sandbox, no network.' },
  { value: 'full-access', detail: 'No OS sandbox: writes anywhere; commands run unconfined, without approval.' },
];
const APPROVAL: { value: ApprovalPolicy; detail: string }[] = [
  { value: 'ask', detail: 'You decide what the sandbox does not allow: protected writes, commands outside the OS sandbox.' },
  { value: 'never', detail: 'What the sandbox does not allow is refused without asking.' },
];

/** What is in force for `sessionId` (its own switches over the settings), or the settings alone. */
async function current(host: CommandHost, sessionId: string | undefined): Promise<{ sandbox: SandboxMode; approval: ApprovalPolicy }> {
  const defaults = host.panelSettings();
  if (!sessionId) return { sandbox: defaults.sandbox, approval: defaults.approval };
  const o = policyOverrides(await host.controller.events(sessionId));
  const ceiling = defaults.restricted ? RESTRICTED_CEILING : undefined;
  return { sandbox: effectiveSandbox(o, defaults.sandbox, ceiling), approval: effectiveApproval(o, defaults.approval, ceiling) };
}

export function modeItems(now: { sandbox: SandboxMode; approval: ApprovalPolicy }): ModeItem[] {
  const mark = (on: boolean) => (on ? '$(check) ' : '$(blank) ');
  return [
    { label: 'Sandbox', kind: vscode.QuickPickItemKind.Separator },
    ...SANDBOX.map((m) => ({
      label: `${mark(m.value === now.sandbox)}${m.value}`,
      description: m.value === now.sandbox ? 'current' : undefined,
      detail: m.detail,
      choice: { kind: 'sandbox', value: m.value } as Choice,
    })),
    { label: 'Approval', kind: vscode.QuickPickItemKind.Separator },
    ...APPROVAL.map((m) => ({
      label: `${mark(m.value === now.approval)}approval: ${m.value}`,
      description: m.value === now.approval ? 'current' : undefined,
      detail: m.detail,
      choice: { kind: 'approval', value: m.value } as Choice,
    })),
  ];
}

export async function pickPolicy(host: CommandHost, sessionId: string | undefined): Promise<void> {
  const now = await current(host, sessionId);
  const items = modeItems(now);
  const picked = await vscode.window.showQuickPick(items, {
    title: sessionId
      ? `Sandbox and approval (now ${now.sandbox}, approval ${now.approval})`
      : `Default sandbox and approval (now ${now.sandbox}, approval ${now.approval})`,
    ignoreFocusOut: true, // opened from the palette over a webview: see pickSession in commands.ts
  });
  if (!picked?.choice) return;
  const choice = picked.choice;
  const setting = choice.kind === 'sandbox' ? ('policy.sandbox' as const) : ('policy.approval' as const);
  // A workspace value wider than the user's own (or the default) would be ignored: not offered, and said why.
  const workspaceNarrows = !widerThan(setting, choice.value, userPolicy(setting, vscode.workspace.getConfiguration('arbor').inspect(setting)?.globalValue));
  const scopes: ScopeItem[] = [
    ...(sessionId
      ? [
          {
            label: 'This session',
            description: sessionId,
            detail: 'Recorded in its log; its running children keep theirs until it next messages them (a narrower mode then reaches them).',
            scope: 'session' as const,
          },
        ]
      : []),
    {
      label: 'All sessions (user setting)',
      description: `arbor.${setting}`,
      detail: workspaceNarrows
        ? 'Your user settings; sessions with their own switch keep it.'
        : "Your user settings; sessions with their own switch keep it. Not offered for this workspace: a workspace's settings (a cloned repository's) can only narrow yours, never widen them.",
      scope: 'user',
    },
    ...(workspaceNarrows
      ? [
          {
            label: 'This workspace (.vscode/settings.json)',
            description: `arbor.${setting}`,
            detail: "Writes the workspace's settings file, shared with everyone who opens it. It can only narrow each user's own setting.",
            scope: 'workspace' as const,
          },
        ]
      : []),
  ];
  const where = await vscode.window.showQuickPick(scopes, { title: `Apply ${choice.kind === 'sandbox' ? choice.value : `approval ${choice.value}`} to…` });
  if (!where) return;
  if (where.scope === 'session' && sessionId) {
    await host.controller.setPolicy(sessionId, choice.kind === 'sandbox' ? { sandbox: choice.value } : { approval: choice.value });
    return;
  }
  const target = where.scope === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration('arbor').update(setting, choice.value, target);
}
