import * as vscode from 'vscode';
import { ChatViewProvider } from './chat-view';

// Activation stays cheap: nothing from src/core is loaded here. The runtime will be
// imported lazily, on the first action that needs it.
export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider(
      ChatViewProvider.viewType,
      new ChatViewProvider(context.extensionUri),
    ),
    vscode.commands.registerCommand('arbor.newConversation', async () => {
      // Every contributed view gets a `<id>.focus` command, which also reveals its container.
      await vscode.commands.executeCommand(`${ChatViewProvider.viewType}.focus`);
    }),
  );
}

export function deactivate(): void {
  // Nothing to release yet: every disposable lives in context.subscriptions.
}
