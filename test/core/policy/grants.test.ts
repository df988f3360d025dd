import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../../../src/core/harness';
import { type ApprovalReply, type ApprovalRequest, activeGrants, commandPrefix, grantCovers } from '../../../src/core/policy';
import { whyNoGrant } from '../../../src/core/policy/grants';
import type { ApprovalGrantEvent, SessionEvent, SessionHeader } from '../../../src/core/session/events';
import { unifiedDiff } from '../../../src/core/tools/diff';
import { makeHarness, type TestHarness } from '../../support/harness';
import { ModelServer } from '../../support/model-server';
import { scriptedApproval } from '../../support/scripted-approval';

// "Allow for this conversation" (decision 0012): a durable grant that skips the ask for one
// tool within one scope, revocable, never wider than what was asked, never a child's.

const header: SessionHeader = { id: 's1', createdAt: '2026-01-01T00:00:00.000Z', origin: 'user' };
const grantEv = (seq: number, grantId: string, over: Partial<ApprovalGrantEvent> = {}): ApprovalGrantEvent => ({
  seq,
  at: '2026-01-01T00:00:00.000Z',
  type: 'approval/grant',
  grantId,
  tool: 'run_command',
  scope: { kind: 'command-prefix', value: 'npm test' },
  sandbox: 'workspace-write',
  ...over,
});

describe('approval grants', () => {
  describe('scope rules', () => {
    it('a command grant covers its program and sub-command, nothing chained or different', () => {
      assert.equal(commandPrefix('npm test'), 'npm test');
      assert.equal(commandPrefix('npm test -- --grep parser'), 'npm test');
      assert.equal(commandPrefix('node --version'), 'node --version');
      assert.equal(commandPrefix('ls'), 'ls');
      for (const risky of ['npm test && rm -rf ~', 'npm test; curl x', 'npm test | sh', 'npm test $(whoami)', 'npm test > out', 'echo "hi"']) {
        assert.equal(commandPrefix(risky), undefined, risky);
      }
      const [g] = activeGrants(header, [grantEv(0, 'g1')]);
      const covers = (command: string, sandbox: 'read-only' | 'workspace-write' | 'full-access' = 'workspace-write') =>
        grantCovers(g, 'run_command', { kind: 'command', command }, sandbox);
      assert.equal(covers('npm test'), true);
      assert.equal(covers('npm  test   -- --grep x'), true);
      assert.equal(covers('npm testing'), false);
      assert.equal(covers('npm publish'), false);
      assert.equal(covers('npm test && rm -rf ~'), false);
      assert.equal(covers('npm'), false);
      // Granted under workspace-write: it holds in a wider mode, not in a narrower one.
      assert.equal(covers('npm test', 'full-access'), true);
      assert.equal(covers('npm test', 'read-only'), false);
      assert.equal(grantCovers(g, 'write_file', { kind: 'command', command: 'npm test' }, 'workspace-write'), false);
    });

    it('what is not offered says why: a compound command, odd characters; an offered one has no reason', () => {
      assert.equal(whyNoGrant({ kind: 'command', command: 'npm test -- --grep x' }), undefined);
      assert.equal(whyNoGrant({ kind: 'path', path: '/w/.vscode/settings.json' }), undefined);
      for (const c of ['npm test && rm -rf ~', 'ls | head', 'echo $(id)', 'make > log'])
        assert.match(whyNoGrant({ kind: 'command', command: c }) ?? '', /^Only once: this command chains, pipes, redirects or substitutes/, c);
      assert.match(whyNoGrant({ kind: 'command', command: 'cp a^ b' }) ?? '', /^Only once: this command has characters/);
    });

    it('a path grant covers that tool and that exact path only', () => {
      const [g] = activeGrants(header, [grantEv(0, 'g1', { tool: 'write_file', scope: { kind: 'path', value: '/w/.vscode/settings.json' } })]);
      assert.equal(grantCovers(g, 'write_file', { kind: 'path', path: '/w/.vscode/settings.json' }, 'workspace-write'), true);
      assert.equal(grantCovers(g, 'write_file', { kind: 'path', path: '/w/.vscode/settings.json.bak' }, 'workspace-write'), false);
      assert.equal(grantCovers(g, 'write_file', { kind: 'path', path: '/w/.vscode' }, 'workspace-write'), false);
      assert.equal(grantCovers(g, 'edit_file', { kind: 'path', path: '/w/.vscode/settings.json' }, 'workspace-write'), false);
    });

    it('folds last event per grant id; a revoke ends it; a fork seed does not carry grants', () => {
      const events: SessionEvent[] = [
        grantEv(0, 'g1'),
        grantEv(1, 'g2', { scope: { kind: 'command-prefix', value: 'git status' } }),
        grantEv(2, 'g1', { revoked: true }),
      ];
      assert.deepEqual(
        activeGrants(header, events).map((g) => g.grantId),
        ['g2'],
      );
      assert.deepEqual(
        activeGrants({ ...header, origin: 'fork', parentSession: 'p', seedLength: 2 }, events).map((g) => g.grantId),
        [],
      );
    });

    it('a diff preview shows the changed lines with context and hunk headers', () => {
      const before = `${Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n')}\n`;
      const after = before.replace('line 10\n', 'line ten\n');
      const d = unifiedDiff(before, after, 'f.txt');
      assert.equal(
        d,
        ['--- a/f.txt', '+++ b/f.txt', '@@ -7,7 +7,7 @@', 'line 7', 'line 8', 'line 9', '-line 10', '+line ten', 'line 11', 'line 12', 'line 13']
          .map((l, i) => (i > 2 && !/^[-+]/.test(l) ? ` ${l}` : l))
          .join('\n'),
      );
      assert.equal(unifiedDiff('a\n', 'a\n'), '');
      assert.equal(unifiedDiff('', 'x\ny\n', 'n'), '--- a/n\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y');
    });
  });

  describe('in a running conversation (real model server, real store)', () => {
    let server: ModelServer;
    let t: TestHarness;
    let asked: ApprovalRequest[];
    let answers: (ApprovalReply | 'allow' | 'deny')[];
    before(async () => (server = await ModelServer.start()));
    after(() => server.stop());
    beforeEach(async () => {
      server.reset();
      asked = [];
      answers = [];
      t = await makeHarness(server, { approval: 'ask', approvalPort: port() });
    });
    afterEach(async () => {
      await t.h.close().catch(() => undefined); // a reopened harness, if the test made one
      await t.cleanup();
    });

    function port() {
      return scriptedApproval((req) => {
        asked.push(req);
        return answers.shift() ?? 'deny';
      });
    }

    /** One user turn in which the model calls `name(args)` once, then says done. */
    async function turn(h: Harness, id: string, name: string, args: Record<string, unknown>): Promise<{ content: string; isError: boolean }> {
      server.enqueue({ toolCalls: [{ name, arguments: args }] }, { text: 'done' });
      const agent = await h.openSession(id);
      const before = agent.session.events.length;
      await agent.accept(`please ${name}`, { kind: 'user' });
      await h.settle();
      const result = agent.session.events.slice(before).find((e) => e.type === 'tool/result');
      assert.ok(result && result.type === 'tool/result', 'the turn has a tool result');
      return { content: result.content, isError: result.isError };
    }

    it('allow for this conversation records a grant; the next matching command runs without asking, across a reopen', async () => {
      const id = (await t.h.createSession()).id;
      answers.push({ decision: 'allow', remember: true });
      const first = await turn(t.h, id, 'run_command', { command: 'echo granted', outsideSandbox: true });
      assert.equal(first.isError, false, first.content);
      assert.equal(asked.length, 1);
      assert.deepEqual(asked[0].grant, { kind: 'command-prefix', value: 'echo granted' });
      const grants = await t.h.grants(id);
      assert.equal(grants.length, 1);
      assert.deepEqual(
        { tool: grants[0].tool, scope: grants[0].scope, sandbox: grants[0].sandbox },
        { tool: 'run_command', scope: { kind: 'command-prefix', value: 'echo granted' }, sandbox: 'workspace-write' },
      );

      const second = await turn(t.h, id, 'run_command', { command: 'echo granted again', outsideSandbox: true });
      assert.equal(second.isError, false, second.content);
      assert.match(second.content, /granted again/);
      assert.equal(asked.length, 1, 'the second matching request did not ask');

      // Reopen the store in a new harness: the grant is folded from the log.
      await t.h.close();
      const h2 = await Harness.open({ ...t.h.config, approvalPort: port() });
      t.h = h2; // cleaned up by afterEach
      const third = await turn(h2, id, 'run_command', { command: 'echo granted after restart', outsideSandbox: true });
      assert.equal(third.isError, false, third.content);
      assert.equal(asked.length, 1, 'the grant held after reopening');

      // Scoped exactly: another sub-command asks (and is denied by default here).
      const other = await turn(h2, id, 'run_command', { command: 'echo other', outsideSandbox: true });
      assert.equal(other.isError, true);
      assert.equal(asked.length, 2);
      const chained = await turn(h2, id, 'run_command', { command: 'echo granted && touch pwned', outsideSandbox: true });
      assert.equal(chained.isError, true);
      assert.equal(asked.length, 3);
      assert.equal(asked[2].grant, undefined, 'a chained command is never offered a grant');
      assert.equal(fs.existsSync(path.join(t.workspace, 'pwned')), false);
    });

    it('a revoked grant asks again; policy never still denies despite a grant', async () => {
      const id = (await t.h.createSession()).id;
      answers.push({ decision: 'allow', remember: true });
      await turn(t.h, id, 'run_command', { command: 'echo hi', outsideSandbox: true });
      const [g] = await t.h.grants(id);
      await t.h.revokeGrant(id, g.grantId);
      assert.deepEqual(await t.h.grants(id), []);
      await assert.rejects(t.h.revokeGrant(id, g.grantId), /no active grant/);
      const again = await turn(t.h, id, 'run_command', { command: 'echo hi', outsideSandbox: true });
      assert.equal(again.isError, true);
      assert.equal(asked.length, 2, 'asked again after the revoke');

      answers.push({ decision: 'allow', remember: true });
      await turn(t.h, id, 'run_command', { command: 'echo hi', outsideSandbox: true });
      await t.h.setPolicy(id, { approval: 'never' });
      const never = await turn(t.h, id, 'run_command', { command: 'echo hi', outsideSandbox: true });
      assert.equal(never.isError, true);
      assert.match(never.content, /approval policy is "never"/);
    });

    it('a protected write shows a diff; its grant covers that tool and path only; the sandbox still refuses in read-only', async () => {
      const id = (await t.h.createSession()).id;
      fs.mkdirSync(path.join(t.workspace, '.vscode'));
      fs.writeFileSync(path.join(t.workspace, '.vscode', 'settings.json'), '{\n  "a": 1\n}\n');
      answers.push({ decision: 'allow', remember: true });
      const w1 = await turn(t.h, id, 'write_file', { path: '.vscode/settings.json', content: '{\n  "a": 2\n}\n' });
      assert.equal(w1.isError, false, w1.content);
      assert.equal(asked[0].preview?.kind, 'diff');
      assert.match(asked[0].preview!.text, /- {2}"a": 1\n\+ {2}"a": 2/);
      assert.deepEqual(asked[0].grant, { kind: 'path', value: fs.realpathSync(path.join(t.workspace, '.vscode', 'settings.json')) });

      const w2 = await turn(t.h, id, 'write_file', { path: '.vscode/settings.json', content: '{}\n' });
      assert.equal(w2.isError, false, w2.content);
      assert.equal(asked.length, 1, 'same tool, same path: no ask');
      const other = await turn(t.h, id, 'write_file', { path: '.vscode/tasks.json', content: '{}\n' });
      assert.equal(other.isError, true);
      assert.equal(asked[1].preview?.kind, 'content', 'a new file shows its content');
      const edit = await turn(t.h, id, 'edit_file', { path: '.vscode/settings.json', oldText: '{}', newText: '{ }' });
      assert.equal(edit.isError, true, 'edit_file is another tool: it asks');
      assert.equal(asked.length, 3);

      // Read-only: the sandbox refuses before anyone is asked, grant or not.
      await t.h.setPolicy(id, { sandbox: 'read-only' });
      const ro = await turn(t.h, id, 'write_file', { path: '.vscode/settings.json', content: '{"b":1}\n' });
      assert.equal(ro.isError, true);
      assert.doesNotMatch(ro.content, /approval/);
      assert.equal(fs.readFileSync(path.join(t.workspace, '.vscode', 'settings.json'), 'utf8'), '{}\n');
    });

    it("a denial's reason reaches the model in the tool result", async () => {
      const id = (await t.h.createSession()).id;
      answers.push({ decision: 'deny', reason: 'use the fast test script instead' });
      const r = await turn(t.h, id, 'run_command', { command: 'npm test', outsideSandbox: true });
      assert.equal(r.isError, true);
      const last = server.requests[server.requests.length - 1].body.messages;
      const tool = last.find((m) => m.role === 'tool');
      assert.ok(tool, 'the next request has the tool message');
      assert.match(String(tool.content), /refused by the user, who said: "use the fast test script instead"/);
    });

    it("a child does not inherit its parent's grant", async () => {
      await t.cleanup();
      t = await makeHarness(server, { approval: 'ask', approvalPort: port(), childApproval: 'escalate' });
      const id = (await t.h.createSession()).id;
      answers.push({ decision: 'allow', remember: true });
      await turn(t.h, id, 'run_command', { command: 'echo parent', outsideSandbox: true });
      assert.equal(asked.length, 1);
      // The parent delegates; the child runs the same command: it must ask (escalated).
      server.enqueue(
        { toolCalls: [{ name: 'subagent', arguments: { prompt: 'run it', label: 'kid' } }] },
        { toolCalls: [{ name: 'run_command', arguments: { command: 'echo parent', outsideSandbox: true } }] },
        { text: 'child done' },
        { text: 'parent done' },
      );
      const agent = await t.h.openSession(id);
      await agent.accept('delegate', { kind: 'user' });
      await t.h.settle();
      assert.equal(asked.length, 2, "the child's request was asked, not covered by the parent's grant");
      assert.notEqual(asked[1].sessionId, id);
      assert.deepEqual(asked[1].lineage?.slice(1), [id]);
    });
  });
});
