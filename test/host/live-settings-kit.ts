import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { Harness } from '../../src/core/harness';
import type { SessionEvent } from '../../src/core/session/events';
import type { ArborHost } from '../../src/extension/host';
import type { SettingKey } from '../../src/extension/setting-rules';
import type { HostToWebview } from '../../src/protocol';
import type { ChatBody, ModelServer, Reply, ScriptedToolCall } from '../support/model-server';
import { isChild } from './arbor-on-server';

/** How long the host may take to apply a setting change (it arrives through onDidChangeConfiguration). */
const APPLY_MS = 15_000;

/** A promise of the first `event` value `pred` accepts, or a failure naming `what` after `ms`. */
export function next<T>(event: vscode.Event<T>, pred: (v: T) => boolean, what: string, ms = APPLY_MS): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
    }, ms);
    const sub = event((v) => {
      if (!pred(v)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(v);
    });
  });
}

/**
 * Settings changed as a user changes them (the user's settings.json, through VS Code), each
 * awaited until Arbor has applied it, and put back afterwards in reverse order.
 */
export class UserSettings {
  private readonly before: [SettingKey, unknown][] = [];
  constructor(private readonly host: ArborHost) {}

  private static section(key: SettingKey): string {
    return key.slice('arbor.'.length);
  }

  /** Sets `key` and resolves once the host has applied the change. */
  async set(key: SettingKey, value: unknown): Promise<void> {
    const config = vscode.workspace.getConfiguration('arbor');
    if (!this.before.some(([k]) => k === key)) this.before.push([key, config.inspect(UserSettings.section(key))?.globalValue]);
    const applied = next(this.host.onDidApplySettings, (keys) => keys.includes(key), `Arbor to apply ${key} = ${JSON.stringify(value)}`);
    await config.update(UserSettings.section(key), value, vscode.ConfigurationTarget.Global);
    await applied;
  }

  /** Every setting changed since the last restore gets its earlier user value back. */
  async restore(): Promise<void> {
    for (const [key, value] of this.before.splice(0).reverse()) {
      const config = vscode.workspace.getConfiguration('arbor');
      if (JSON.stringify(config.inspect(UserSettings.section(key))?.globalValue) === JSON.stringify(value)) continue;
      const applied = next(this.host.onDidApplySettings, (keys) => keys.includes(key), `Arbor to apply ${key} put back`);
      await config.update(UserSettings.section(key), value, vscode.ConfigurationTarget.Global);
      await applied;
    }
  }
}

/** The model's side: the root asks for `calls` when it reads `prompt`, children answer `child`, everything else gets a short text. */
export function rootCalls(server: ModelServer, prompt: string, calls: ScriptedToolCall[], child: Reply = { text: 'child done' }): void {
  server.setFallback((body: ChatBody) => {
    if (isChild(body)) return child;
    const last = body.messages[body.messages.length - 1];
    if (last.role === 'user' && String(last.content ?? '').includes(prompt)) return { toolCalls: calls };
    return { text: 'root done' };
  });
}

export interface Sent {
  id: string;
  events: SessionEvent[];
  /** Everything the panel was sent meanwhile. */
  got: HostToWebview[];
}

/** A new conversation from the panel (as its input sends one), run until everything settles. */
export async function chat(host: ArborHost, h: Harness, text: string, settle = true): Promise<Sent> {
  const got: HostToWebview[] = [];
  const port = { view: 'panel' as const, post: (m: HostToWebview) => got.push(m) };
  const off = host.controller.connect(port);
  const rid = `live-${Math.random().toString(36).slice(2)}`;
  try {
    await host.controller.receive(port, { type: 'chat/send', id: rid, text });
    if (settle) await h.settle();
  } finally {
    off();
  }
  const done = got.find((m) => m.type === 'request/done' && m.id === rid);
  assert.ok(done && done.type === 'request/done' && done.ok, `the panel's send was answered: ${JSON.stringify(done)}`);
  const id = (done as { sessionId: string }).sessionId;
  return { id, events: await h.store.readEvents(id), got };
}

/** The events of one type. */
export function ofType<T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T): Extract<SessionEvent, { type: T }>[] {
  return events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type);
}

/** The one tool result of a conversation whose root called one tool. */
export function toolResult(events: readonly SessionEvent[]): Extract<SessionEvent, { type: 'tool/result' }> {
  const results = ofType(events, 'tool/result');
  assert.equal(results.length, 1, `one tool result: ${JSON.stringify(results)}`);
  return results[0];
}
