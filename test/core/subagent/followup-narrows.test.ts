import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../../src/core/session/events';
import { policyOverrides } from '../../../src/core/session/folds';
import { type ScriptedApproval, scriptedApproval } from '../../support/scripted-approval';
import { hold, ofType, subagentWorld } from './helpers';

// A parent the user narrowed must not get its old width back through a continuable child it
// started before: its next message to that child carries its bounds now (decision 0125). Real
// files, the real model server; the child's commands in the real OS sandbox.

const write = (file: string) => ({ name: 'write_file', arguments: { path: file, content: 'written' } });
const results = (evs: readonly SessionEvent[], name: string) => ofType(evs, 'tool/result').filter((e) => e.name === name);

describe('subagent: a parent narrowed after a start narrows its child at its next message', () => {
  const w = subagentWorld({ sandbox: 'workspace-write' }, { perTest: true });
  const exists = (f: string) => fs.existsSync(path.join(w.t.workspace, f));

  /** Root starts a continuable child that writes a.txt (then, `held`, waits at its gate, resident and running); returns its id. */
  async function started(held: boolean): Promise<string> {
    let childId = '';
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] write a.txt', mode: 'continuable' } }] }, (body) => {
      childId = JSON.parse(String(body.messages.at(-1)!.content)).childId;
      return { text: 'started' };
    });
    w.script.on('c', { toolCalls: [write('a.txt')] }, ...(held ? [{ toolCalls: [hold('c')] }] : []), { text: 'c wrote a' });
    await w.root.accept('[[root]] start a child');
    if (held) await w.gates.whenHeld('c');
    else await w.t.h.settle();
    assert.ok(childId, 'the child started');
    assert.equal(exists('a.txt'), true, 'the child could write under the parent it had then');
    return childId;
  }

  for (const [name, held, path] of [
    ['resident and running', true, 'inbox'],
    ['released, then cold-resumed', false, 'cold-resume'],
  ] as const) {
    it(`read-only parent → its send_message reaches a ${name} child, which then cannot write`, async () => {
      await w.setup();
      const childId = await started(held);
      // The user narrows the parent; the model tries the child it started before.
      await w.root.append({ type: 'sandbox/mode', mode: 'read-only', source: 'user' });
      w.script.on('root', { toolCalls: [{ name: 'send_message', arguments: { agentId: childId, message: '[[c]] now write b.txt' } }] }, { text: 'sent' });
      w.script.on('c', { toolCalls: [write('b.txt')] }, { text: 'c tried b' });
      await w.root.accept('[[root]] have the child write b.txt');
      if (held) {
        await w.root.idle();
        w.gates.release('c');
      }
      await w.t.h.settle();

      const sent = ofType(w.root.session.events, 'tool/result').find((e) => e.name === 'send_message')!;
      assert.equal(JSON.parse(sent.content).delivered, path);
      const evs = await w.t.h.store.readEvents(childId);
      const [, second] = results(evs, 'write_file');
      assert.ok(second?.isError, `the second write was refused: ${second?.content}`);
      assert.match(second.content, /read-only/);
      assert.equal(exists('b.txt'), false, 'b.txt was not written');
      assert.equal(policyOverrides(evs).sandbox?.value, 'read-only');
      // The narrowing is the child's own fact, from delegation, before the message it came with.
      const narrowed = ofType(evs, 'sandbox/mode').at(-1)!;
      assert.equal(narrowed.source, 'delegation');
      const accepted = ofType(evs, 'inbox/accepted').at(-1)!;
      assert.ok(narrowed.seq < accepted.seq);
    });
  }

  it('a parent whose approval became never: its escalating child is refused without asking', async () => {
    const port: ScriptedApproval = scriptedApproval(() => 'allow');
    await w.setup({ approval: 'ask', approvalPort: port, childApproval: 'escalate' });
    let childId = '';
    const outside = (file: string) => ({ name: 'run_command', arguments: { command: `echo ran > ${file}`, outsideSandbox: true } });
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] run one', mode: 'continuable' } }] }, (body) => {
      childId = JSON.parse(String(body.messages.at(-1)!.content)).childId;
      return { text: 'started' };
    });
    w.script.on('c', { toolCalls: [outside('one.txt')] }, { text: 'c ran one' });
    await w.root.accept('[[root]] start');
    await w.t.h.settle();
    assert.equal(exists('one.txt'), true, 'escalated and allowed by the human while the parent could ask');
    const asked = port.requests.length;

    await w.root.append({ type: 'approval/policy', policy: 'never', source: 'user' });
    w.script.on('root', { toolCalls: [{ name: 'send_message', arguments: { agentId: childId, message: '[[c]] run two' } }] }, { text: 'sent' });
    w.script.on('c', { toolCalls: [outside('two.txt')] }, { text: 'c tried two' });
    await w.root.accept('[[root]] again');
    await w.t.h.settle();

    const evs = await w.t.h.store.readEvents(childId);
    const [, second] = results(evs, 'run_command');
    assert.ok(second?.isError, second?.content);
    assert.match(second.content, /approval policy is "never"/);
    assert.equal(exists('two.txt'), false);
    assert.equal(port.requests.length, asked, 'nobody was asked for the child');
  });

  it('never wider: a child narrower than its parent keeps its own, and a human message narrows nothing', async () => {
    await w.setup();
    w.script.on('c', { text: 'c looked' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] look', sandbox: 'read-only' });
    await w.t.h.settle();
    const before = ofType(await w.t.h.store.readEvents(childId), 'sandbox/mode').length;

    w.script.on('root', { toolCalls: [{ name: 'send_message', arguments: { agentId: childId, message: '[[c]] write w.txt' } }] }, { text: 'sent' });
    w.script.on('c', { toolCalls: [write('w.txt')] }, { text: 'c tried' });
    await w.root.accept('[[root]] ask it to write');
    await w.t.h.settle();
    let evs = await w.t.h.store.readEvents(childId);
    assert.equal(ofType(evs, 'sandbox/mode').length, before, 'nothing appended: the parent is wider');
    assert.equal(policyOverrides(evs).sandbox?.value, 'read-only');
    assert.equal(exists('w.txt'), false);

    // The human narrows the root, then writes to the child directly: a human's message is the user's own.
    await w.root.append({ type: 'sandbox/mode', mode: 'read-only', source: 'user' });
    await w.t.h.setPolicy(childId, { sandbox: 'workspace-write' });
    w.script.on('c', { toolCalls: [write('h.txt')] }, { text: 'c wrote h' });
    await w.t.h.send(childId, '[[c]] write h.txt');
    await w.t.h.settle();
    evs = await w.t.h.store.readEvents(childId);
    assert.equal(policyOverrides(evs).sandbox?.value, 'workspace-write');
    assert.equal(exists('h.txt'), true, "the human's own widening of the child holds for the human's message");
  });
});
