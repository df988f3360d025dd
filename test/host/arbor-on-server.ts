import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ArborApi } from '../../src/extension/extension';
import type { ChatBody, ModelServer } from '../support/model-server';

/** package.json's publisher.name: the id a host test finds Arbor under (development folder or installed .vsix). */
export const EXTENSION_ID = 'arbor-dev.arbor';

/** A request of a subagent (its first message is the runtime's delegation notice). */
export const isChild = (b: ChatBody) => b.messages.some((m) => String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));

/**
 * Points Arbor at `server` (user settings), activates it and waits until its harness uses the
 * new endpoint: the host applies it from onDidChangeConfiguration, after other files' setting
 * changes it may still be handling, so the first request would otherwise go to a stopped server.
 */
export async function arborOnServer(server: ModelServer): Promise<ArborApi> {
  await vscode.workspace.getConfiguration('arbor').update('model.baseUrl', server.baseURL, vscode.ConfigurationTarget.Global);
  const ext = vscode.extensions.getExtension<ArborApi>(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is installed`);
  const api = await ext.activate();
  const h = await (await api.host()).getHarness();
  for (const deadline = Date.now() + 10_000; !('baseURL' in h.config.model && h.config.model.baseURL === server.baseURL); ) {
    if (Date.now() > deadline) assert.fail(`the harness still uses ${JSON.stringify(h.config.model)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return api;
}
