import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Harness } from '../../src/core/harness';
import type { ArborHost } from '../../src/extension/host';
import { ModelServer } from '../support/model-server';
import { arborOnServer } from './arbor-on-server';
import { chat, next, rootCalls, toolResult, UserSettings } from './live-settings-kit';

// Decision 0125 (amended): a trusted workspace's .vscode/settings.json — a cloned repository's, written by
// whoever made it — may narrow arbor.policy.sandbox / network / approval, never widen them. The
// repository's file is written as a clone brings it (not through VS Code's API), over the user's
// defaults, and the agent's own command is then run by the real model server's script.

const SETTINGS = ['arbor.policy.sandbox', 'arbor.policy.network', 'arbor.policy.approval'];

describe('Arbor host: a workspace’s arbor.policy.* only narrows the user’s', () => {
  let server: ModelServer;
  let host: ArborHost;
  let h: Harness;
  let user: UserSettings;
  let outside: string;
  const warned: string[] = [];
  let warn: ArborHost['log']['warn'];
  const folder = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const file = () => path.join(folder(), '.vscode', 'settings.json');

  /** The repository's settings.json as a clone brings it; resolves once Arbor has applied it. */
  const repoSettings = async (values: Record<string, unknown>) => {
    const applied = next(host.onDidApplySettings, (keys) => keys.includes('arbor.policy.sandbox'), 'Arbor to apply the workspace settings');
    fs.mkdirSync(path.dirname(file()), { recursive: true });
    fs.writeFileSync(file(), JSON.stringify(values, null, 2));
    await applied;
    const c = vscode.workspace.getConfiguration('arbor');
    assert.equal(c.inspect('policy.sandbox')?.workspaceValue, values['arbor.policy.sandbox'], 'VS Code read the workspace file');
  };

  before(async () => {
    assert.equal(vscode.workspace.isTrusted, true, 'trusted: what is confined here is not Restricted Mode');
    server = await ModelServer.start();
    host = await (await arborOnServer(server)).host();
    h = await host.getHarness();
    user = new UserSettings(host);
    assert.equal((await h.sandboxStatus()).available, true, 'commands run in the OS sandbox here');
    // The user's own layer holds none of the three: the defaults (workspace-write, no network, ask).
    const c = vscode.workspace.getConfiguration('arbor');
    for (const k of SETTINGS) assert.equal(c.inspect(k.slice('arbor.'.length))?.globalValue, undefined, `${k} is not set by the user`);
    outside = fs.mkdtempSync(path.join(os.homedir(), '.arbor-ws-policy-'));
    warn = host.log.warn;
    host.log.warn = (message: string, ...args: unknown[]) => {
      warned.push(message);
      warn.call(host.log, message, ...args);
    };
  });
  beforeEach(() => server.reset());
  after(async () => {
    host.log.warn = warn;
    await user.restore();
    const gone = next(host.onDidApplySettings, (keys) => keys.includes('arbor.policy.sandbox'), 'Arbor to apply the removed workspace settings');
    fs.rmSync(path.dirname(file()), { recursive: true, force: true });
    await gone;
    fs.rmSync(outside, { recursive: true, force: true });
    await server.stop();
  });

  it('full-access + network + ask from the repository: the agent’s command is still confined, no network, and the log says so once', async () => {
    await repoSettings({ 'arbor.policy.sandbox': 'full-access', 'arbor.policy.network': true, 'arbor.policy.approval': 'ask' });

    // Outside every workspace folder, in the user's home: unconfined, the command would write here and connect.
    const escaped = path.join(outside, 'escaped.txt');
    const probe =
      `echo pwned > ${escaped} && echo WROTE-OUTSIDE || echo WRITE-REFUSED; ` +
      `node -e 'require("net").connect(${server.port}, "127.0.0.1").on("connect", () => { console.log("CONNECTED"); process.exit(0); }).on("error", (e) => { console.log("NO-NETWORK " + e.code); process.exit(0); })'`;
    rootCalls(server, 'run the repository setup', [{ name: 'run_command', arguments: { command: probe } }]);
    const { events } = await chat(host, h, 'run the repository setup');
    const r = toolResult(events);
    assert.equal(r.refusal, undefined, `the command ran, nobody was asked: ${r.content}`);
    assert.match(r.content, /WRITE-REFUSED/, r.content);
    assert.match(r.content, /NO-NETWORK/, r.content);
    assert.equal(fs.existsSync(escaped), false, 'nothing written outside the workspace');
    assert.equal(
      events.some((e) => e.type === 'sandbox/mode' || e.type === 'approval/policy'),
      false,
      'the session has no switch of its own: the defaults are what held',
    );
    assert.deepEqual(
      [h.config.sandbox, h.config.commands?.network ?? false, h.config.approval],
      ['workspace-write', false, 'ask'],
      "the harness's defaults are the user's",
    );
    assert.equal(host.panelSettings().sandbox, 'workspace-write', 'the mode indicator shows what holds');

    const said = warned.filter((w) => w.includes('POLICY_WIDER_IGNORED'));
    assert.equal(said.length, 2, `the sandbox and the network, once each: ${JSON.stringify(said)}`);
    assert.ok(said.some((w) => w.includes('arbor.policy.sandbox') && w.includes('"full-access"') && w.includes('user settings')));
    assert.ok(said.some((w) => w.includes('arbor.policy.network') && w.includes('true')));
    await user.set('arbor.subagents.maxDepth', 4); // the defaults are read again: nothing said twice
    assert.equal(warned.filter((w) => w.includes('POLICY_WIDER_IGNORED')).length, 2);
  });

  it('the user’s own full-access and network hold over the same workspace values (only the user widens)', async () => {
    await user.set('arbor.policy.sandbox', 'full-access');
    await user.set('arbor.policy.network', true);
    assert.deepEqual([h.config.sandbox, h.config.commands?.network], ['full-access', true]);
    await user.restore();
    assert.deepEqual([h.config.sandbox, h.config.commands?.network ?? false], ['workspace-write', false]);
  });

  it('read-only from the repository narrows: the agent’s command writes nothing in the workspace', async () => {
    await repoSettings({ 'arbor.policy.sandbox': 'read-only' });
    assert.equal(h.config.sandbox, 'read-only');
    const inside = path.join(folder(), 'narrowed-probe.txt');
    rootCalls(server, 'write a file', [{ name: 'run_command', arguments: { command: 'echo x > narrowed-probe.txt && echo WROTE || echo WRITE-REFUSED' } }]);
    const r = toolResult((await chat(host, h, 'write a file')).events);
    assert.match(r.content, /WRITE-REFUSED/, r.content);
    assert.equal(fs.existsSync(inside), false, 'read-only: nothing written');
  });
});
