import * as assert from 'node:assert/strict';
import { descriptorOf, policyOverrides, Session, type SubagentDescriptorEvent } from '../../../src/core/session';
import { ev, forkHeader, header, sessionWith, wholeTurn } from './fixtures';

describe('policyOverrides', () => {
  it('is empty when the log holds no policy event', () => {
    assert.deepEqual(policyOverrides(sessionWith(wholeTurn('t1')).events), {});
  });

  it('takes the last event of each kind, keeping its source and seq', () => {
    const s = sessionWith([
      ev.sandbox('read-only', 'user'), // 0
      ev.approval('ask', 'delegation'), // 1
      ev.sandbox('full-access', 'delegation'), // 2
      ...wholeTurn('t1'), // 3–6
      ev.sandbox('workspace-write', 'user'), // 7
    ]);
    assert.deepEqual(policyOverrides(s.events), {
      sandbox: { value: 'workspace-write', source: 'user', seq: 7 },
      approval: { value: 'ask', source: 'delegation', seq: 1 },
    });
  });

  it('sandbox and approval are independent', () => {
    const s = sessionWith([ev.approval('never', 'user')]);
    assert.deepEqual(policyOverrides(s.events), { approval: { value: 'never', source: 'user', seq: 0 } });
  });

  it("in a fork: the seed's user switch, then a delegation event after the seed, then the child's own switch", () => {
    const parent = sessionWith([ev.sandbox('full-access', 'user'), ev.approval('never', 'user'), ...wholeTurn('t1')]); // 0–5
    const child = Session.fromSeed(forkHeader(), parent.events); // end-seed at 6
    assert.deepEqual(
      policyOverrides(child.events),
      {
        sandbox: { value: 'full-access', source: 'user', seq: 0 },
        approval: { value: 'never', source: 'user', seq: 1 },
      },
      'a fork inherits the seed switches',
    );

    child.append(ev.sandbox('read-only', 'delegation')); // 7
    child.append(ev.approval('ask', 'delegation')); // 8
    assert.deepEqual(
      policyOverrides(child.events),
      {
        sandbox: { value: 'read-only', source: 'delegation', seq: 7 },
        approval: { value: 'ask', source: 'delegation', seq: 8 },
      },
      'the delegation overrides the seed',
    );

    child.append(ev.sandbox('workspace-write', 'user')); // 9
    assert.deepEqual(
      policyOverrides(child.events),
      {
        sandbox: { value: 'workspace-write', source: 'user', seq: 9 },
        approval: { value: 'ask', source: 'delegation', seq: 8 },
      },
      "the child's later switch overrides the delegation",
    );
  });
});

describe('descriptorOf', () => {
  it('is undefined without a descriptor', () => {
    const s = sessionWith(wholeTurn('t1'));
    assert.equal(descriptorOf(s.header, s.events), undefined);
  });

  it('is the last subagent/descriptor of a session that is not a fork', () => {
    const s = sessionWith([ev.descriptor('first'), ...wholeTurn('t1'), ev.descriptor('second')], { origin: 'subagent', parentSession: 'p' });
    const d = descriptorOf(s.header, s.events);
    assert.equal(d?.label, 'second');
    assert.equal(d?.seq, 5);
  });

  it("ignores an ancestor's descriptor inside a fork seed", () => {
    const ancestor = sessionWith([ev.descriptor('ancestor'), ...wholeTurn('t1')], { origin: 'subagent', parentSession: 'p' });
    const fork = Session.fromSeed(forkHeader({ parentSession: 'root' }), ancestor.events);
    assert.equal(descriptorOf(fork.header, fork.events), undefined);
    fork.append(ev.descriptor('mine'));
    const d = descriptorOf(fork.header, fork.events) as SubagentDescriptorEvent;
    assert.equal(d.label, 'mine');
    assert.equal(d.seq, fork.firstLiveSeq);
  });

  it('in a fork of a fork, ignores both ancestors and takes its own', () => {
    const root = sessionWith([ev.descriptor('root-desc'), ...wholeTurn('t1')]);
    const child = Session.fromSeed(forkHeader({ id: 'child' }), root.events);
    child.append(ev.descriptor('child-desc'));
    for (const d of wholeTurn('t2')) child.append(d);
    const grandchild = Session.fromSeed(forkHeader({ id: 'grandchild', parentSession: 'child' }), child.events);
    assert.equal(descriptorOf(child.header, child.events)?.label, 'child-desc');
    assert.equal(descriptorOf(grandchild.header, grandchild.events), undefined);
    grandchild.append(ev.descriptor('grandchild-desc'));
    assert.equal(descriptorOf(grandchild.header, grandchild.events)?.label, 'grandchild-desc');
  });

  it('reads the seed boundary from the header, as a restored session has it', () => {
    const ancestor = sessionWith([ev.descriptor('ancestor'), ...wholeTurn('t1')]);
    const fork = Session.fromSeed(forkHeader(), ancestor.events);
    const back = Session.restore(structuredClone(fork.header), structuredClone(fork.events) as (typeof fork.events)[number][]);
    assert.equal(descriptorOf(back.header, back.events), undefined);
    assert.equal(descriptorOf(header(), back.events)?.label, 'ancestor', 'without the seed boundary it would be mistaken for its own');
  });
});
