import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

const EXTENSION_ID = 'arbor-dev.arbor'; // package.json publisher.name

describe('Arbor in the real extension host', () => {
  it('is loaded and activates', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not among the loaded extensions`);
    await extension.activate();
    assert.equal(extension.isActive, true);
  });

  it('registers arbor.newConversation', async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)?.activate();
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('arbor.newConversation'), 'arbor.newConversation is not registered');
  });
});
