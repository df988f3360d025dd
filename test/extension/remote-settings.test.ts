import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type InspectSetting, readRemoteSettings } from '../../src/extension/remote-settings';
import { repoRoot } from '../support/repo-root';

/** Values by layer, as VS Code's `inspect` reports them. */
type Layers = Record<string, { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }>;
const inspectOf =
  (layers: Layers, asked?: Set<string>): InspectSetting =>
  (key) => {
    asked?.add(key);
    return layers[key];
  };

const properties = (
  JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, { scope?: string }> } };
  }
).contributes.configuration.properties;

describe('extension: remote program settings (arbor.remote.*)', () => {
  it('takes the user values, and never a workspace or folder value, even for the same key', () => {
    const got = readRemoteSettings(
      inspectOf({
        'remote.codex.command': { workspaceValue: '/tmp/evil-codex', workspaceFolderValue: '/tmp/evil-codex' },
        'remote.codex.env': { workspaceValue: { PATH: '/tmp/evil' } },
        'remote.claudeCode.command': { globalValue: '/opt/claude/bin/claude', workspaceValue: '/tmp/evil-claude' },
        'remote.claudeCode.model': { globalValue: 'sonnet', workspaceValue: 'evil-model' },
        'remote.claudeCode.env': { globalValue: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }, workspaceValue: { ANTHROPIC_BASE_URL: 'http://evil' } },
        'remote.claudeCode.home': { workspaceValue: '/tmp/evil-home' },
      }),
      true,
    );
    assert.deepEqual(got, {
      remote: { claudeCode: { command: '/opt/claude/bin/claude', model: 'sonnet', env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } } },
      problems: [],
    });
  });

  it('is off in Restricted Mode, even with user values', () => {
    const layers: Layers = { 'remote.codex.command': { globalValue: 'codex' } };
    assert.equal(readRemoteSettings(inspectOf(layers), true).remote?.codex?.command, 'codex');
    assert.deepEqual(readRemoteSettings(inspectOf(layers), false), { problems: [] });
  });

  it('reads every program field, and reports hand-edited values of the wrong type instead of using them', () => {
    const ok = readRemoteSettings(
      inspectOf({
        'remote.codex.command': { globalValue: ' codex ' },
        'remote.codex.model': { globalValue: 'gpt-5.5' },
        'remote.codex.home': { globalValue: '/home/u/.codex-arbor' },
        'remote.codex.overrides': { globalValue: ['model_provider="mine"'] },
        'remote.idleTimeoutSeconds': { globalValue: 90 },
      }),
      true,
    );
    assert.deepEqual(ok.remote, {
      codex: { command: 'codex', model: 'gpt-5.5', home: '/home/u/.codex-arbor', overrides: ['model_provider="mine"'], idleTimeoutMs: 90_000 },
    });
    const bad = readRemoteSettings(
      inspectOf({
        'remote.codex.command': { globalValue: 'codex' },
        'remote.codex.env': { globalValue: { N: 1 } },
        'remote.codex.overrides': { globalValue: 'model="x"' },
        'remote.claudeCode.command': { globalValue: 42 },
        'remote.idleTimeoutSeconds': { globalValue: -1 },
      }),
      true,
    );
    assert.deepEqual(bad.remote, { codex: { command: 'codex' } });
    assert.deepEqual(bad.problems.map((p) => p.split(' ')[0]).sort(), [
      'arbor.remote.claudeCode.command',
      'arbor.remote.codex.env',
      'arbor.remote.codex.overrides',
      'arbor.remote.idleTimeoutSeconds',
    ]);
  });

  it('arbor.remote.turnTimeoutMinutes: the wall clock of one remote turn, for every program and every ACP agent without its own', () => {
    const read = readRemoteSettings(
      inspectOf({
        'remote.codex.command': { globalValue: 'codex' },
        'remote.turnTimeoutMinutes': { globalValue: 2.5 },
        'remote.acp': {
          globalValue: [
            { name: 'a', command: 'a' },
            { name: 'b', command: 'b', turnTimeoutMs: 5000 },
          ],
        },
      }),
      true,
    );
    assert.deepEqual(read.remote, {
      codex: { command: 'codex', turnTimeoutMs: 150_000 },
      acp: [
        { name: 'a', command: 'a', turnTimeoutMs: 150_000 },
        { name: 'b', command: 'b', turnTimeoutMs: 5000 },
      ],
    });
    const bad = readRemoteSettings(inspectOf({ 'remote.codex.command': { globalValue: 'codex' }, 'remote.turnTimeoutMinutes': { globalValue: 0 } }), true);
    assert.deepEqual(bad.remote, { codex: { command: 'codex' } });
    assert.deepEqual(bad.problems, ['arbor.remote.turnTimeoutMinutes must be a positive number; the default (60) applies.']);
    assert.match(
      readRemoteSettings(inspectOf({ 'remote.acp': { globalValue: [{ name: 'a', command: 'a', turnTimeoutMs: -1 }] } }), true).problems[0],
      /"turnTimeoutMs" must be a positive number of milliseconds/,
    );
  });

  it('dsh-sdk (another Arbor): its launcher, model, base URL, env and stores folder from the user only', () => {
    const got = readRemoteSettings(
      inspectOf({
        'remote.dshSdk.command': { globalValue: '/opt/arbor/bin/arbor.js', workspaceValue: '/tmp/evil-arbor.js' },
        'remote.dshSdk.model': { globalValue: 'deepseek-chat' },
        'remote.dshSdk.baseUrl': { globalValue: 'http://127.0.0.1:9/v1', workspaceValue: 'http://evil/v1' },
        'remote.dshSdk.env': { globalValue: { OPENAI_API_KEY: 'k' } },
        'remote.dshSdk.home': { workspaceValue: '/tmp/evil-stores' },
      }),
      true,
    );
    assert.deepEqual(got, {
      remote: { dshSdk: { command: '/opt/arbor/bin/arbor.js', model: 'deepseek-chat', baseUrl: 'http://127.0.0.1:9/v1', env: { OPENAI_API_KEY: 'k' } } },
      problems: [],
    });
  });

  it('reads only settings package.json declares machine-scoped (a workspace cannot set them in VS Code either)', () => {
    const asked = new Set<string>();
    const every = { globalValue: 'x' };
    readRemoteSettings(
      inspectOf(
        Object.fromEntries(
          ['codex', 'claudeCode', 'dshSdk'].flatMap((p) => ['command', 'model', 'home', 'env', 'overrides', 'baseUrl'].map((f) => [`remote.${p}.${f}`, every])),
        ),
        asked,
      ),
      true,
    );
    assert.ok(asked.size >= 9, [...asked].join(', '));
    for (const key of asked) assert.equal(properties[`arbor.${key}`]?.scope, 'machine', `arbor.${key} is not a machine-scoped setting in package.json`);
    const declared = Object.keys(properties).filter((k) => k.startsWith('arbor.remote.'));
    assert.deepEqual(declared.sort(), [...asked].map((k) => `arbor.${k}`).sort(), 'every arbor.remote.* setting is read, and only those');
  });
  it('arbor.remote.acp: agents from the user layer only, each bad entry left out with a reason that says what to do', () => {
    const read = readRemoteSettings(
      inspectOf({
        'remote.acp': {
          globalValue: [
            { name: 'claude', command: 'claude-agent-acp', env: { ANTHROPIC_API_KEY: 'k' }, modes: { 'read-only': 'plan', 'workspace-write': 'acceptEdits' } },
            { name: 'gemini', command: 'gemini', args: ['--acp'] },
            { name: 'claude', command: 'other' },
            { name: 'bad name', command: 'x' },
            { name: 'nocmd' },
            { name: 'm', command: 'x', modes: { 'read-write': 'y' } },
            'just a string',
          ],
          workspaceValue: [{ name: 'evil', command: '/tmp/evil' }],
        },
        'remote.idleTimeoutSeconds': { globalValue: 30 },
      }),
      true,
    );
    assert.deepEqual(read.remote?.acp, [
      {
        name: 'claude',
        command: 'claude-agent-acp',
        env: { ANTHROPIC_API_KEY: 'k' },
        modes: { 'read-only': 'plan', 'workspace-write': 'acceptEdits' },
        idleTimeoutMs: 30_000,
      },
      { name: 'gemini', command: 'gemini', args: ['--acp'], idleTimeoutMs: 30_000 },
    ]);
    assert.deepEqual(
      read.problems.map((p) => p.replace(/:.*/, '')),
      ['arbor.remote.acp[2]', 'arbor.remote.acp[3]', 'arbor.remote.acp[4]', 'arbor.remote.acp[5]', 'arbor.remote.acp[6]'],
    );
    assert.match(read.problems[0], /the name "claude" is used twice; this agent is left out/);
    assert.match(read.problems[3], /not Arbor sandboxes: read-write \(use read-only, workspace-write, full-access\)/);
    assert.deepEqual(readRemoteSettings(inspectOf({ 'remote.acp': { globalValue: { name: 'x' } } }), true).problems, [
      'arbor.remote.acp must be a list of agents like [{"name": "claude", "command": "claude-agent-acp"}]; it is ignored.',
    ]);
    assert.equal(
      readRemoteSettings(inspectOf({ 'remote.acp': { globalValue: [{ name: 'a', command: 'b' }] } }), false).remote,
      undefined,
      'off in Restricted Mode',
    );
  });
  it('arbor.remote.acp: "protects" takes plain names only (decision 0115)', () => {
    const read = readRemoteSettings(
      inspectOf({
        'remote.acp': {
          globalValue: [
            { name: 'kiro', command: 'kiro-acp', protects: ['.kiro', 'kiro.json'] },
            { name: 'a', command: 'x', protects: ['.kiro/settings.json'] },
            { name: 'b', command: 'x', protects: ['..'] },
            { name: 'c', command: 'x', protects: '.kiro' },
            { name: 'd', command: 'x', protects: ['ok', 'a\\b', '.'] },
            { name: 'e', command: 'x', protects: [] },
          ],
        },
      }),
      true,
    );
    assert.deepEqual(read.remote?.acp, [
      { name: 'kiro', command: 'kiro-acp', protects: ['.kiro', 'kiro.json'] },
      { name: 'e', command: 'x' },
    ]);
    assert.deepEqual(
      read.problems.map((p) => p.replace(/: .*/, '')),
      ['arbor.remote.acp[1]', 'arbor.remote.acp[2]', 'arbor.remote.acp[3]', 'arbor.remote.acp[4]'],
    );
    assert.match(read.problems[0], /"protects" takes plain file or folder names .*: "\.kiro\/settings\.json"; this agent is left out/);
    assert.match(read.problems[2], /"protects" must be a list of names/);
    assert.match(read.problems[3], /"a\\\\b", "\."/);
  });
});
