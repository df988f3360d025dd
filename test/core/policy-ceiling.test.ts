import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RESTRICTED_CEILING } from '../../src/core/policy/sandbox';
import { scriptedApproval } from '../support/scripted-approval';
import { ofType, subagentWorld } from './subagent/helpers';

// VS Code's Restricted Mode is a ceiling (decision 0125): a conversation switched to
// full-access + ask while the workspace was trusted must not keep running unconfined once it
// is not. Real files, the real OS sandbox for commands, the real model server.
describe('harness: a policy ceiling (Restricted Mode) holds over a session’s own switches', () => {
  const port = scriptedApproval(() => 'allow');
  // What the extension opens in Restricted Mode: read-only, never, and the ceiling.
  const w = subagentWorld({ sandbox: 'read-only', approval: 'never', approvalPort: port, ceiling: { ...RESTRICTED_CEILING } }, { gates: false });
  const exists = (f: string) => fs.existsSync(path.join(w.t.workspace, f));

  const tries = [
    { name: 'write_file', arguments: { path: 'file.txt', content: 'written' } },
    { name: 'run_command', arguments: { command: 'echo confined > cmd.txt' } },
    { name: 'run_command', arguments: { command: 'echo outside > out.txt', outsideSandbox: true, justification: 'test' } },
  ];

  it('a session switched to full-access + ask before: writes nothing, runs nothing unconfined, asks nobody — nor does its child', async () => {
    await w.t.h.setPolicy(w.root.id, { sandbox: 'full-access', approval: 'ask' });
    w.script.on('r', { toolCalls: [...tries, { name: 'subagent', arguments: { prompt: '[[c]] write' } }] }, { text: 'tried' });
    w.script.on('c', { toolCalls: [{ name: 'write_file', arguments: { path: 'child.txt', content: 'x' } }] }, { text: 'c tried' });
    await w.root.accept('[[r]] write, run, delegate');
    await w.t.h.settle();

    const results = ofType(w.root.session.events, 'tool/result');
    const [write, confined, outside] = results;
    assert.ok(write.isError, write.content);
    assert.match(write.content, /read-only/);
    assert.ok(confined.isError, `the confined command could not write: ${confined.content}`);
    assert.ok(outside.isError, outside.content);
    // Refused by the ceiling itself, before the approval policy or any port: it says why and how to lift it.
    assert.match(outside.content, /POLICY_CEILING.*Restricted Mode.*trust the workspace/);
    for (const f of ['file.txt', 'cmd.txt', 'out.txt', 'child.txt']) assert.equal(exists(f), false, `${f} was not written`);
    assert.equal(port.requests.length, 0, 'nobody was asked');
    const [child] = w.t.h.store.children(w.root.id);
    const childWrite = ofType(await w.t.h.store.readEvents(child.id), 'tool/result')[0];
    assert.ok(childWrite.isError, childWrite.content);
  });

  it('lifted (the workspace trusted again): the session’s own switch holds again', async () => {
    await w.t.h.setPolicy(w.root.id, { sandbox: 'full-access', approval: 'ask' });
    w.t.h.setDefaults({ ceiling: null, sandbox: 'workspace-write' });
    w.script.on('r', { toolCalls: [tries[0]] }, { text: 'wrote' });
    await w.root.accept('[[r]] write');
    await w.t.h.settle();
    const [write] = ofType(w.root.session.events, 'tool/result');
    assert.ok(!write.isError, write.content);
    assert.equal(exists('file.txt'), true);
  });
});
