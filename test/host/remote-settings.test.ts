import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { readRemote } from '../../src/extension/settings';

/** Wait (polling) until `ok` holds; the workspace's settings.json is read by a file watcher. */
async function until(ok: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Arbor host: remote program settings come from the user only', () => {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const file = folder ? path.join(folder, '.vscode', 'settings.json') : '';

  after(async () => {
    await vscode.workspace.getConfiguration('arbor').update('remote.claudeCode.command', undefined, vscode.ConfigurationTarget.Global);
    if (file) fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  it("ignores a command (and its environment) named in the workspace's settings.json", async () => {
    assert.ok(folder, 'the host tests open a workspace folder');
    assert.equal(vscode.workspace.isTrusted, true, 'trusted: a refusal here is not Restricted Mode');
    // The user names one program; the workspace tries to name the other and to replace the user's.
    await vscode.workspace.getConfiguration('arbor').update('remote.claudeCode.command', '/opt/user/claude', vscode.ConfigurationTarget.Global);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      JSON.stringify({
        'arbor.goal.defaultMaxRounds': 7, // a window-scoped marker: proves VS Code has read this file
        'arbor.remote.codex.command': '/tmp/evil-codex',
        'arbor.remote.codex.env': { PATH: '/tmp/evil' },
        'arbor.remote.claudeCode.command': '/tmp/evil-claude',
      }),
    );
    await until(() => vscode.workspace.getConfiguration('arbor').inspect('goal.defaultMaxRounds')?.workspaceValue === 7, "the workspace's settings.json");
    await until(() => readRemote().remote?.claudeCode !== undefined, 'the user setting');
    assert.deepEqual(readRemote(), { remote: { claudeCode: { command: '/opt/user/claude' } }, problems: [] });
    // VS Code itself keeps machine-scoped settings out of a workspace.
    assert.equal(vscode.workspace.getConfiguration('arbor').get('remote.codex.command'), '');
    assert.equal(vscode.workspace.getConfiguration('arbor').get('remote.claudeCode.command'), '/opt/user/claude');
  });
});
