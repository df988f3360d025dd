import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { autoApprove } from '../../src/core/policy/approval';
import { policyOverrides } from '../../src/core/session/folds';
import { ofType, subagentWorld } from './subagent/helpers';

// Issue 10.8: a fork made from an earlier message runs under its source's policy as it is
// now. The seed may hold a looser switch the user has since taken back; it must not revive.
describe('harness: a user fork never revives a looser policy', () => {
  // The deployment asks a port that allows everything: only the session's policy stands between a write and the disk.
  const w = subagentWorld({ sandbox: 'workspace-write', approval: 'never', approvalPort: autoApprove }, { gates: false });

  const outside = () => path.join(path.dirname(w.t.workspace), 'outside.txt');
  const writes = () => [
    { name: 'write_file', arguments: { path: outside(), content: 'escaped' } },
    { name: 'write_file', arguments: { path: '.vscode/settings.json', content: '{}' } },
  ];

  it('a fork from a message written under full-access + ask, after a switch back to workspace-write + never, writes neither outside nor to a protected path', async () => {
    await w.t.h.setPolicy(w.root.id, { sandbox: 'full-access', approval: 'ask' });
    w.script.on('r', { text: 'looked around' });
    await w.root.accept('[[r]] look around');
    await w.t.h.settle();
    const forkPoint = ofType(w.root.session.events, 'assistant/message')[0].seq;
    // The user takes the looser policy back, then forks from the message written under it.
    await w.t.h.setPolicy(w.root.id, { sandbox: 'workspace-write', approval: 'never' });

    const fork = await w.t.h.forkSession(w.root.id, forkPoint);
    w.script.on('f', { toolCalls: writes() }, { text: 'tried' });
    await fork.accept('[[f]] write both files');
    await w.t.h.settle();
    const results = ofType(fork.session.events, 'tool/result');
    assert.equal(results.length, 2);
    for (const r of results) assert.ok(r.isError, r.content);
    assert.match(results[0].content, /outside the workspace/);
    assert.match(results[1].content, /protected path/);
    assert.equal(fs.existsSync(outside()), false, 'nothing was written outside the workspace');
    assert.equal(fs.existsSync(path.join(w.t.workspace, '.vscode', 'settings.json')), false, 'nothing was written to .vscode');

    const own = fork.session.events.slice(fork.session.firstLiveSeq);
    assert.deepEqual(
      own
        .filter((e) => e.type === 'sandbox/mode' || e.type === 'approval/policy')
        .map((e) => (e.type === 'sandbox/mode' ? e.mode : e.type === 'approval/policy' ? e.policy : '')),
      ['workspace-write', 'never'],
      "the source's current policy is the fork's own fact, after its seed",
    );
    const o = policyOverrides(fork.session.events);
    assert.equal(o.sandbox?.value, 'workspace-write');
    assert.equal(o.approval?.value, 'never');

    // The policy sticks with the fork across a reopen (it is in the fork's log, not derived at fork time).
    const stored = await w.t.h.store.inspect(fork.id);
    assert.equal(policyOverrides(stored.events).sandbox?.value, 'workspace-write');
  });

  it('control: a fork of a source still under full-access + ask writes both (the looser policy is carried when it is current)', async () => {
    await w.t.h.setPolicy(w.root.id, { sandbox: 'full-access', approval: 'ask' });
    w.script.on('r', { text: 'looked around' });
    await w.root.accept('[[r]] look around');
    await w.t.h.settle();
    const fork = await w.t.h.forkSession(w.root.id, ofType(w.root.session.events, 'assistant/message')[0].seq);
    w.script.on('f', { toolCalls: writes() }, { text: 'wrote' });
    await fork.accept('[[f]] write both files');
    await w.t.h.settle();
    for (const r of ofType(fork.session.events, 'tool/result')) assert.ok(!r.isError, r.content);
    assert.equal(fs.readFileSync(outside(), 'utf8'), 'escaped');
    assert.equal(fs.readFileSync(path.join(w.t.workspace, '.vscode', 'settings.json'), 'utf8'), '{}');
  });

  it('a fork of a session that never switched has no override: it follows the deployment defaults', async () => {
    w.script.on('r', { text: 'hi' });
    await w.root.accept('[[r]] hi');
    await w.t.h.settle();
    const fork = await w.t.h.forkSession(w.root.id, ofType(w.root.session.events, 'turn/end')[0].seq);
    assert.deepEqual(policyOverrides(fork.session.events), {});
  });
});
