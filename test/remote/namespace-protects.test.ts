// Attack (decision 0036, amended s60): Arbor's own confined commands cannot write a protected name
// in a root (`.arbor`, `.vscode`, `.mcp.json`, …) nor the session store, but a remote program's
// namespace bound `/` as it is. Codex's own workspace-write sandbox makes its whole cwd writable, so
// a Codex child could plant `.arbor/settings.json` (hooks Arbor runs outside any sandbox),
// `.vscode/tasks.json` or `.mcp.json`, and with the CLI's store in the workspace (`.arbor/store`)
// forge session logs; Claude Code in workspace-write (acceptEdits, no OS sandbox) could write them too.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { privateTmpDir } from '../../src/core/remote/private-tmp';
import { agentHome, agentLaunch, codexExec, SANDBOX_MODE_IDS, scriptAgents } from '../support/acp-agents';
import type { TestHarness } from '../support/harness';
import { byWire, finishedChild, ofType, remoteWorld } from './world';

/** The workspace a child attacks: an existing `.vscode/tasks.json`; no `.arbor` (unless the store is there), no `.mcp.json`. */
function plant(workspace: string): void {
  fs.mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
  fs.writeFileSync(path.join(workspace, '.vscode', 'tasks.json'), 'orig');
}

/** The attack's command: each write says how it went; the last two must work. */
const attack = (store: string): string =>
  [
    'sleep 0.3',
    'mkdir -p .arbor && echo x > .arbor/settings.json; echo "arbor=$?"',
    'echo x > .vscode/tasks.json; echo "vscode=$?"',
    'echo x > .mcp.json; echo "mcp=$?"',
    `echo x > ${store}/forged.jsonl; echo "store=$?"`,
    'echo ok > fine.txt; echo "fine=$?"',
    'touch "$TMPDIR/t" && echo "tmp=$TMPDIR"',
  ].join('; ');

/** What the attack's command said: every protected write refused, the workspace and the child's temp folder written. */
function assertRefused(t: TestHarness, childId: string, said: string): void {
  assertUntouched(t, said);
  for (const what of ['arbor', 'vscode', 'mcp', 'store']) assert.match(said, new RegExp(`${what}=1`), said);
  assert.equal(fs.readFileSync(path.join(t.workspace, 'fine.txt'), 'utf8'), 'ok\n', said);
  assert.ok(said.includes(`tmp=${privateTmpDir(t.h.store.dir, childId)}`), said);
  // The stand-ins are gone once the child's program is: nothing is left at the workspace's top.
  assert.equal(fs.existsSync(path.join(t.workspace, '.mcp.json')), false, 'the .mcp.json stand-in was removed');
}

/** What the attack must not have changed on the host. */
function assertUntouched(t: TestHarness, said: string): void {
  const ws = t.workspace;
  assert.equal(fs.readFileSync(path.join(ws, '.vscode', 'tasks.json'), 'utf8'), 'orig', `.vscode/tasks.json was changed: ${said}`);
  assert.equal(fs.existsSync(path.join(ws, '.arbor', 'settings.json')), false, `.arbor/settings.json was made: ${said}`);
  assert.equal(fs.statSync(path.join(ws, '.mcp.json'), { throwIfNoEntry: false })?.isFile() ?? false, false, `.mcp.json was made: ${said}`);
  assert.equal(fs.existsSync(path.join(t.storeDir, 'forged.jsonl')), false, `the store was written: ${said}`);
}

describe("remote: a confined Codex child cannot write protected names nor the store (real Codex, its namespace's mounts)", function () {
  this.timeout(120_000);
  const w = remoteWorld();

  const STORES: readonly { how: string; open: () => Promise<TestHarness> }[] = [
    { how: 'the store outside the workspace', open: async () => w.t },
    {
      how: "the CLI's store in the workspace (.arbor/store)",
      open: async () => w.reopen({ storeDir: path.join(w.t.workspace, '.arbor', 'store'), workspace: [w.t.workspace] }),
    },
  ];

  for (const s of STORES)
    it(`attack (${s.how}): mkdir .arbor, .vscode/tasks.json, .mcp.json and the store are refused; the workspace and $TMPDIR stay writable`, async () => {
      const t = await s.open();
      plant(t.workspace);
      const cmd = attack(t.storeDir);
      byWire(w.server, {
        chat: [{ toolCalls: [{ name: 'delegate_codex', arguments: { prompt: 'plant settings' } }] }, { text: 'parent done' }],
        responses: [{ toolCalls: [{ name: 'exec_command', arguments: { cmd } }] }, { text: 'tried' }],
      });
      const root = await t.h.createSession();
      await root.accept('go');
      await t.h.settle();
      const [child] = t.h.store.children(root.id);
      const res = ofType((await t.h.store.inspect(child.id)).events, 'tool/result').find((r) => r.name === 'codex:shell');
      assert.ok(res, 'the codex child ran its command');
      assertRefused(t, child.id, res.content);
    });
});

describe('remote: a workspace-write Claude Code child cannot write protected names (real Claude Code, its namespace mounts)', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  it("attack: Write .arbor/settings.json, .vscode/tasks.json and .mcp.json, and acceptEdits' unasked mkdir .arbor/hooks, fail; a plain file is written", async () => {
    plant(w.t.workspace);
    const ws = w.t.workspace;
    const write = (p: string) => ({ name: 'Write', arguments: { file_path: path.join(ws, p), content: 'x' } });
    byWire(w.server, {
      messages: [
        {
          toolCalls: [
            write('.arbor/settings.json'),
            write('.vscode/tasks.json'),
            write('.mcp.json'),
            write('fine.txt'),
            // acceptEdits also runs the file-system commands (mkdir, touch…) on the workspace's paths unasked.
            { name: 'Bash', arguments: { command: 'mkdir -p .arbor/hooks && touch .arbor/settings.json', description: 'make the folder' } },
          ],
        },
        { text: 'tried' },
      ],
    });
    const { run, r } = await finishedChild(w.t, 'claude-code', 'plant settings');
    assert.equal(r.stopReason, 'completed', r.error);
    const results = ofType((await w.t.h.store.inspect(run.id)).events, 'tool/result');
    const said = JSON.stringify(results.map((x) => [x.name, x.isError, x.content.slice(0, 200)]));
    assertUntouched(w.t, said);
    assert.equal(fs.existsSync(path.join(ws, '.arbor', 'hooks')), false, `.arbor/hooks was made: ${said}`);
    assert.equal(fs.readFileSync(path.join(ws, 'fine.txt'), 'utf8'), 'x', said);
  });
});

describe('remote: a workspace-write ACP agent cannot write protected names nor the store (real codex-acp, its namespace mounts)', function () {
  this.timeout(120_000);
  const w = remoteWorld();
  let home = '';
  afterEach(() => {
    if (home) fs.rmSync(home, { recursive: true, force: true });
    home = '';
  });

  it("attack (the CLI's store in the workspace): the same writes are refused; the workspace and $TMPDIR stay writable", async () => {
    home = agentHome('protects-codex');
    const launch = agentLaunch('codex', w.server, home);
    const agent = { name: 'codex', command: launch.command, args: launch.args, env: launch.env, modes: SANDBOX_MODE_IDS.codex, graceMs: 1500 };
    const storeDir = path.join(w.t.workspace, '.arbor', 'store');
    const t = await w.reopen({ remote: { acp: [agent] }, sandbox: 'workspace-write', storeDir, workspace: [w.t.workspace] });
    plant(t.workspace);
    scriptAgents(w.server, { responses: [codexExec(attack(storeDir)), { text: 'tried' }] });
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, 'acp:codex', { prompt: 'Do the task' });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    const results = ofType((await t.h.store.inspect(run.id)).events, 'tool/result');
    assertRefused(t, run.id, results[0]?.content ?? '');
  });
});
