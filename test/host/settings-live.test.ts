import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Harness } from '../../src/core/harness';
import type { ArborHost } from '../../src/extension/host';
import { SETTING_KEYS, SETTING_RULES, type SettingKey } from '../../src/extension/setting-rules';
import type { TreeNode } from '../../src/protocol';
import { ModelServer } from '../support/model-server';
import { repoRoot } from '../support/repo-root';
import { arborOnServer } from './arbor-on-server';
import { chat, next, ofType, rootCalls, toolResult, UserSettings } from './live-settings-kit';

const EVERYTHING = path.join(repoRoot(), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

// Issue 21.4 (decision 0049): every arbor.* setting, changed in a running window, reaches the
// next action that reads it — or, for the few wired when the harness opens, the window says once
// that it applies after a reload. One case per row of SETTING_RULES: a `Record<SettingKey, …>`,
// so a setting without its case does not compile (and setting-rules.test.ts holds the table to
// package.json).

/** A model with no default price, so a cost appears only once `arbor.prices` names it. */
const MODEL = 'settings-live-model';

describe('Arbor host: every arbor.* setting applies to the next action, or asks for a reload', () => {
  let server: ModelServer;
  let host: ArborHost;
  let h: Harness;
  let settings: UserSettings;
  const folder = () => vscode.workspace.workspaceFolders![0].uri.fsPath;

  before(async () => {
    server = await ModelServer.start();
    const api = await arborOnServer(server);
    host = await api.host();
    h = await host.getHarness();
    settings = new UserSettings(host);
    await settings.set('arbor.model.name', MODEL);
  });
  beforeEach(() => {
    server.reset();
    server.setFallback(() => ({ text: 'ok' }));
  });
  afterEach(async () => {
    // A case's settings go back, except the model name the whole file uses (restored last).
    const name = vscode.workspace.getConfiguration('arbor').get('model.name');
    await settings.restore();
    if (vscode.workspace.getConfiguration('arbor').get('model.name') !== name) await settings.set('arbor.model.name', MODEL);
  });
  after(async () => {
    await settings.restore();
    await server.stop();
  });

  /** The root's one tool call, answered in a new conversation after `key` was set to `value`. */
  const callAfter = async (key: SettingKey, value: unknown, call: { name: string; arguments: Record<string, unknown> }) => {
    await settings.set(key, value);
    const prompt = `after ${key}`;
    rootCalls(server, prompt, [call]);
    return chat(host, h, prompt);
  };

  /** A workflow run the root starts after `key` was set; its `workflow/start` limits and its end. */
  const workflowAfter = async (key: SettingKey, value: unknown, extra: Record<string, unknown> = {}) => {
    const { events } = await callAfter(key, value, {
      name: 'workflow',
      arguments: { script: 'return 1;', meta: { name: 'limits', description: 'reads its limits' }, ...extra },
    });
    const start = ofType(events, 'workflow/start').at(-1) as unknown as {
      data: { limits: { maxTotalAgents: number; concurrency: number; wallClockMs: number } };
    };
    const end = ofType(events, 'workflow/end').at(-1) as unknown as { data: { status: string } };
    assert.ok(start && end, `the run started and ended: ${JSON.stringify(toolResult(events))}`);
    return { limits: start.data.limits, status: end.data.status };
  };

  /** A change to a reload-only setting (after `first`, e.g. the program's command) shows the prompt naming it; the open harness is unchanged. */
  const asksReload = async (key: SettingKey, value: unknown, first?: [SettingKey, unknown]) => {
    if (first) await settings.set(...first);
    const tools = h.tools.view({ own: 'settings-live' }).map((t) => t.name);
    const asked = next(host.reloadPrompt.onDidAsk, (keys) => keys.includes(key), `the reload prompt naming ${key}`);
    await settings.set(key, value);
    await asked;
    assert.deepEqual(
      h.tools.view({ own: 'settings-live' }).map((t) => t.name),
      tools,
      'nothing is rewired until the reload',
    );
  };

  /** A program's command: its other settings change what is wired only once it is set. */
  const CODEX: [SettingKey, string] = ['arbor.remote.codex.command', 'codex-not-installed'];
  const CLAUDE: [SettingKey, string] = ['arbor.remote.claudeCode.command', 'claude-not-installed'];
  const ARBOR: [SettingKey, string] = ['arbor.remote.dshSdk.command', 'arbor-not-installed'];

  const CASES: Record<SettingKey, () => Promise<void>> = {
    'arbor.model.baseUrl': async () => {
      const other = await ModelServer.start();
      try {
        await settings.set('arbor.model.baseUrl', other.baseURL);
        await chat(host, h, 'to the other endpoint');
        assert.equal(other.requests.length, 1, 'the next request went to the new endpoint');
        assert.equal(server.requests.length, 0);
        await settings.restore();
      } finally {
        await other.stop();
      }
    },
    'arbor.model.name': async () => {
      await settings.set('arbor.model.name', 'renamed-live');
      await chat(host, h, 'which model');
      assert.deepEqual(
        server.requests.map((r) => r.body.model),
        ['renamed-live'],
      );
    },
    'arbor.subagents.maxDepth': async () => {
      const { id, events } = await callAfter('arbor.subagents.maxDepth', 0, { name: 'subagent', arguments: { prompt: 'a child task' } });
      const r = toolResult(events);
      assert.equal(r.isError, true);
      assert.match(r.content, /delegation limit \(0\)/);
      assert.equal(h.store.children(id).length, 0, 'no child');
    },
    'arbor.model.maxTokens': async () => {
      await settings.set('arbor.model.maxTokens', 1234);
      await chat(host, h, 'capped');
      assert.equal(server.requests[0].body.max_tokens, 1234);
    },
    'arbor.model.completionCapField': async () => {
      await settings.set('arbor.model.maxTokens', 2000);
      await settings.set('arbor.model.completionCapField', 'max_completion_tokens');
      await chat(host, h, 'capped, the other field');
      const body = server.requests[0].body;
      assert.deepEqual([body.max_completion_tokens, body.max_tokens], [2000, undefined]);
    },
    'arbor.model.timeoutSeconds': async () => {
      await settings.set('arbor.model.timeoutSeconds', 1);
      server.setFallback(() => ({ text: 'too late', delayMs: 2_500 }));
      const { events } = await chat(host, h, 'slow model');
      const end = ofType(events, 'turn/end').at(-1);
      assert.equal(end?.stopReason, 'error', JSON.stringify(end));
      assert.equal(end?.errorCode, 'timeout', JSON.stringify(end));
    },
    'arbor.policy.sandbox': async () => {
      const file = path.join(folder(), 'sandbox-probe.txt');
      const { events } = await callAfter('arbor.policy.sandbox', 'read-only', { name: 'write_file', arguments: { path: 'sandbox-probe.txt', content: 'x' } });
      assert.equal(toolResult(events).isError, true, toolResult(events).content);
      assert.equal(fs.existsSync(file), false, 'read-only: nothing written');
    },
    'arbor.policy.network': async () => {
      // The system's node (under /usr, which the sandbox mounts), not this host's: its binary may live where the sandbox hides.
      const probe = `node -e 'require("net").connect(${server.port}, "127.0.0.1").on("connect", () => { console.log("CONNECTED"); process.exit(0); }).on("error", (e) => { console.log("NO-NETWORK " + e.code); process.exit(0); })'`;
      const command = { name: 'run_command', arguments: { command: probe } };
      assert.equal((await h.sandboxStatus()).available, true, 'commands run in the OS sandbox here');
      rootCalls(server, 'probe before', [command]);
      assert.match(toolResult((await chat(host, h, 'probe before')).events).content, /NO-NETWORK/);
      const { events } = await callAfter('arbor.policy.network', true, command);
      assert.match(toolResult(events).content, /CONNECTED/);
    },
    'arbor.policy.approval': async () => {
      // A protected path needs approval: under `never` it is refused at once, nobody is asked.
      const { events } = await callAfter('arbor.policy.approval', 'never', {
        name: 'write_file',
        arguments: { path: '.arbor/approval-probe.txt', content: 'x' },
      });
      const r = toolResult(events);
      assert.equal(r.isError, true, r.content);
      assert.ok(r.refusal, `a refusal: ${r.content}`);
      assert.equal(fs.existsSync(path.join(folder(), '.arbor', 'approval-probe.txt')), false);
    },
    'arbor.subagents.childApproval': async () => {
      const { id } = await callAfter('arbor.subagents.childApproval', 'escalate', { name: 'subagent', arguments: { prompt: 'a child task' } });
      const [child] = h.store.children(id);
      assert.ok(child, 'a child started');
      const policy = ofType(await h.store.readEvents(child.id), 'approval/policy');
      assert.deepEqual(
        policy.map((e) => [e.policy, e.source]),
        [['ask', 'delegation']],
        'the child asks the human (under never it would refuse)',
      );
    },
    'arbor.subagents.maxConcurrent': async () => {
      await settings.set('arbor.subagents.maxConcurrent', 1);
      const child = { name: 'subagent', arguments: { prompt: 'a slow child' } };
      rootCalls(server, 'two at once', [child, { ...child, arguments: { prompt: 'another slow child' } }], { text: 'child done', delayMs: 400 });
      server.reset();
      await chat(host, h, 'two at once');
      assert.equal(server.requests.filter((r) => r.body.messages.some((m) => String(m.content).includes('slow child'))).length >= 2, true);
      assert.equal(server.maxInFlight, 1, 'the two children ran one after the other');
    },
    'arbor.subagents.releaseDelayMs': async () => {
      await settings.set('arbor.subagents.releaseDelayMs', 4_000);
      rootCalls(server, 'a continuable child', [{ name: 'subagent', arguments: { prompt: 'stay a while', mode: 'continuable' } }]);
      const { id } = await chat(host, h, 'a continuable child', false);
      let childId: string | undefined;
      for (const end = Date.now() + 20_000; !(childId && h.resident(childId)?.isSettled); ) {
        if (Date.now() > end) assert.fail('the child did not settle');
        childId = h.store.children(id)[0]?.id;
        await new Promise((r) => setTimeout(r, 20));
      }
      // Past the default delay (1 s) it is still resident: the new delay holds it.
      await new Promise((r) => setTimeout(r, 1_500));
      assert.ok(h.resident(childId), 'still resident 1.5 s after it settled');
      await h.settle();
      assert.equal(h.resident(childId), undefined, 'released after the new delay');
    },
    'arbor.chat.examplePrompts': async () => {
      const got: unknown[] = [];
      const off = host.controller.connect({ view: 'panel', post: (m) => got.push(m) });
      try {
        await settings.set('arbor.chat.examplePrompts', ['Explain this repository']);
        assert.ok(
          got.some(
            (m) =>
              (m as { type: string }).type === 'settings/changed' &&
              JSON.stringify((m as { settings: { examplePrompts?: unknown[] } }).settings.examplePrompts) === '[{"text":"Explain this repository"}]',
          ),
          'the panel was sent the new prompts',
        );
      } finally {
        off();
      }
    },
    'arbor.goal.defaultMaxRounds': async () => {
      await settings.set('arbor.goal.defaultMaxRounds', 2);
      const { id } = await chat(host, h, 'a conversation with a goal');
      const port = { view: 'panel' as const, post: () => undefined };
      const off = host.controller.connect(port);
      try {
        await host.controller.receive(port, { type: 'goal/set', id: 'goal-live', sessionId: id, objective: 'finish the job' });
        await h.settle();
      } finally {
        off();
      }
      const goal = ofType(await h.store.readEvents(id), 'goal/change').at(-1)?.goal;
      assert.deepEqual([goal?.maxGoalRounds, goal?.roundsStarted, goal?.phase, goal?.blocked?.code], [2, 2, 'blocked', 'round-limit']);
    },
    'arbor.workflow.maxTotalAgents': async () => {
      assert.equal((await workflowAfter('arbor.workflow.maxTotalAgents', 2)).limits.maxTotalAgents, 2);
    },
    'arbor.workflow.concurrency': async () => {
      assert.equal((await workflowAfter('arbor.workflow.concurrency', 3)).limits.concurrency, 3);
    },
    'arbor.workflow.maxConcurrency': async () => {
      assert.equal((await workflowAfter('arbor.workflow.maxConcurrency', 2, { concurrency: 10 })).limits.concurrency, 2);
    },
    'arbor.workflow.wallClockMinutes': async () => {
      assert.equal((await workflowAfter('arbor.workflow.wallClockMinutes', 2)).limits.wallClockMs, 120_000);
    },
    'arbor.workflow.allowUnconfinedScripts': async () => {
      // It matters only where no OS sandbox can start: this run's engine is pointed at a bubblewrap that is not there.
      const engine = h.workflows.engine;
      const bwrap = engine.deployment.bwrapPath;
      engine.setDeployment({ bwrapPath: path.join(folder(), 'no-bubblewrap-here') });
      try {
        const call = { name: 'workflow', arguments: { script: 'return 1;', meta: { name: 'unconfined', description: 'no sandbox here' } } };
        rootCalls(server, 'no sandbox before', [call]);
        assert.match(toolResult((await chat(host, h, 'no sandbox before')).events).content, /NO_SANDBOX/);
        assert.equal((await workflowAfter('arbor.workflow.allowUnconfinedScripts', true)).status, 'completed');
      } finally {
        engine.setDeployment({ bwrapPath: bwrap });
      }
    },
    'arbor.prices': async () => {
      const got: unknown[] = [];
      const off = host.controller.connect({ view: 'panel', post: (m) => got.push(m) });
      try {
        const { id } = await chat(host, h, 'priced later');
        const costOf = () =>
          got
            .filter((m): m is { type: 'tree/node'; node: TreeNode } => (m as { type: string }).type === 'tree/node' && (m as { node: TreeNode }).node.id === id)
            .at(-1)?.node.costUsd;
        assert.equal(costOf(), undefined, 'no price, no cost');
        await settings.set('arbor.prices', { [MODEL]: { input: 1000, cacheHit: 100, output: 2000 } });
        assert.ok((costOf() ?? 0) > 0, 'the node shows its cost at the new price');
      } finally {
        off();
      }
    },
    'arbor.hooks.readClaudeSettings': async () => {
      assert.equal(h.hookService?.options.readClaudeSettings, false);
      await settings.set('arbor.hooks.readClaudeSettings', true);
      assert.equal(h.hookService?.options.readClaudeSettings, true, "the hooks' files are read again, .claude/settings.json with them");
    },
    'arbor.checkpoints.enabled': async () => {
      assert.equal(h.checkpoints.enabled, true);
      await settings.set('arbor.checkpoints.enabled', false);
      assert.equal(h.checkpoints.enabled, false, 'the next tool call records nothing');
      await settings.set('arbor.checkpoints.enabled', true);
      assert.equal(h.checkpoints.enabled, true);
    },
    'arbor.git.bareRepositoryExplicit': async () => {
      const guarded = () =>
        Array.from({ length: Number(process.env.GIT_CONFIG_COUNT ?? '0') }, (_, i) => i).some(
          (i) => process.env[`GIT_CONFIG_KEY_${i}`] === 'safe.bareRepository' && process.env[`GIT_CONFIG_VALUE_${i}`] === 'explicit',
        );
      assert.equal(guarded(), true, "the extension host's environment carries it (the next git an extension starts)");
      await settings.set('arbor.git.bareRepositoryExplicit', false);
      assert.equal(guarded(), false, 'taken back');
      await settings.set('arbor.git.bareRepositoryExplicit', true);
      assert.equal(guarded(), true);
    },
    'arbor.mcp.servers': async () => {
      await settings.set('arbor.mcp.servers', { live: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
      await h.mcp.whenSettled();
      const live = h.mcp.states().find((x) => x.name === 'live');
      assert.equal(live?.phase, 'ready', live?.why);
      assert.ok(
        h.tools.view().some((t) => t.name === 'mcp__live__echo'),
        'its tools are registered at once',
      );
    },
    'arbor.mcp.allowTools': async () => {
      await settings.set('arbor.mcp.servers', { live: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
      await h.mcp.whenSettled();
      const echo = () => h.tools.view().find((t) => t.name === 'mcp__live__echo')!;
      // No one to ask here: without an allow the call is refused, with one it goes through.
      const ctx = { sessionId: 's', roots: [], sandbox: 'workspace-write' as const, approvalPolicy: 'ask' as const, signal: new AbortController().signal };
      assert.equal((await echo().execute({ message: 'a' }, ctx)).isError, true);
      await settings.set('arbor.mcp.allowTools', ['mcp__live__echo']);
      const r = await echo().execute({ message: 'allowed now' }, ctx);
      assert.match(r.content, /allowed now/);
    },
    'arbor.remote.codex.command': () => asksReload(...CODEX),
    'arbor.remote.codex.model': () => asksReload('arbor.remote.codex.model', 'gpt-live', CODEX),
    'arbor.remote.codex.env': () => asksReload('arbor.remote.codex.env', { LIVE: '1' }, CODEX),
    'arbor.remote.codex.home': () => asksReload('arbor.remote.codex.home', '/tmp/codex-home-live', CODEX),
    'arbor.remote.codex.overrides': () => asksReload('arbor.remote.codex.overrides', ['live=1'], CODEX),
    'arbor.remote.claudeCode.command': () => asksReload(...CLAUDE),
    'arbor.remote.claudeCode.model': () => asksReload('arbor.remote.claudeCode.model', 'sonnet', CLAUDE),
    'arbor.remote.claudeCode.env': () => asksReload('arbor.remote.claudeCode.env', { LIVE: '1' }, CLAUDE),
    'arbor.remote.claudeCode.home': () => asksReload('arbor.remote.claudeCode.home', '/tmp/claude-home-live', CLAUDE),
    'arbor.remote.dshSdk.command': () => asksReload(...ARBOR),
    'arbor.remote.dshSdk.model': () => asksReload('arbor.remote.dshSdk.model', 'other-model', ARBOR),
    'arbor.remote.dshSdk.baseUrl': () => asksReload('arbor.remote.dshSdk.baseUrl', 'http://127.0.0.1:9/v1', ARBOR),
    'arbor.remote.dshSdk.env': () => asksReload('arbor.remote.dshSdk.env', { LIVE: '1' }, ARBOR),
    'arbor.remote.dshSdk.home': () => asksReload('arbor.remote.dshSdk.home', '/tmp/arbor-home-live', ARBOR),
    'arbor.remote.acp': () => asksReload('arbor.remote.acp', [{ name: 'live', command: 'acp-not-installed' }]),
    'arbor.remote.idleTimeoutSeconds': () => asksReload('arbor.remote.idleTimeoutSeconds', 42, CODEX),
    'arbor.remote.turnTimeoutMinutes': () => asksReload('arbor.remote.turnTimeoutMinutes', 7, CODEX),
    'arbor.placements': () => asksReload('arbor.placements', [{ name: 'live', kind: 'ssh', host: 'box.example' }]),
  };

  for (const key of SETTING_KEYS) {
    const what = SETTING_RULES[key].applies === 'live' ? 'the next action uses it' : 'a reload is asked for, once';
    it(`${key}: ${what}`, CASES[key]);
  }

  it('a reload-only change is said once: the same value again, or a change back, asks nothing', async () => {
    const asks: unknown[] = [];
    const sub = host.reloadPrompt.onDidAsk((keys) => asks.push(keys));
    try {
      await settings.set(...CODEX);
      await settings.set('arbor.remote.codex.model', '');
      assert.equal(asks.length, 1, 'an empty model changes nothing the harness would wire');
      await settings.restore();
      assert.equal(asks.length, 1, 'back to what the harness opened with: nothing to reload');
    } finally {
      sub.dispose();
    }
  });
});
