import * as assert from 'node:assert/strict';
import { Session } from '../../../src/core/session';
import { ev, expectRefusal, header, sessionWith } from './fixtures';

describe('the durable inbox', () => {
  it('lists accepted messages not yet claimed, in acceptance order', () => {
    const s = sessionWith([ev.accepted('m2'), ev.accepted('m1'), ev.accepted('m3')]);
    assert.deepEqual(s.unclaimedInbox, ['m2', 'm1', 'm3']);
    s.append(ev.claimed('m1'));
    assert.deepEqual(s.unclaimedInbox, ['m2', 'm3']);
  });

  it('hands out a copy of the list', () => {
    const s = sessionWith([ev.accepted('m1')]);
    s.unclaimedInbox.push('forged');
    assert.deepEqual(s.unclaimedInbox, ['m1']);
  });

  it('refuses accepting the same message twice while it waits: INBOX_STATE on messageId', () => {
    const s = sessionWith([ev.accepted('m1')]);
    const err = expectRefusal(s, (x) => x.append(ev.accepted('m1', 'again')), { code: 'INBOX_STATE', field: 'messageId', seq: 1 });
    assert.match(err.message, /m1 was already accepted/);
  });

  it('refuses claiming a message that was never accepted: INBOX_STATE on messageId', () => {
    const err = expectRefusal(Session.create(header()), (x) => x.append(ev.claimed('m1')), { code: 'INBOX_STATE', field: 'messageId', seq: 0 });
    assert.match(err.message, /m1 is not waiting in the inbox/);
  });

  it('refuses claiming a message twice', () => {
    const s = sessionWith([ev.accepted('m1'), ev.claimed('m1')]);
    expectRefusal(s, (x) => x.append(ev.claimed('m1')), { code: 'INBOX_STATE', field: 'messageId', seq: 2 });
  });

  it('claims in any order and may be claimed inside or outside a turn', () => {
    const s = sessionWith([ev.accepted('m1'), ev.accepted('m2'), ev.claimed('m2'), ev.turnStart('t1'), ev.claimed('m1')]);
    assert.deepEqual(s.unclaimedInbox, []);
  });
});

describe('withdrawing from the durable inbox', () => {
  it('removes a waiting message; it can then be neither claimed nor withdrawn again', () => {
    const s = sessionWith([ev.accepted('m1'), ev.accepted('m2')]);
    s.append({ type: 'inbox/withdrawn', messageId: 'm1' });
    assert.deepEqual(s.unclaimedInbox, ['m2']);
    expectRefusal(s, (x) => x.append(ev.claimed('m1')), { code: 'INBOX_STATE', field: 'messageId', seq: 3 });
    const err = expectRefusal(s, (x) => x.append({ type: 'inbox/withdrawn', messageId: 'm1' }), { code: 'INBOX_STATE', field: 'messageId', seq: 3 });
    assert.match(err.message, /already claimed or withdrawn/);
  });

  it('refuses withdrawing a claimed message: INBOX_STATE', () => {
    const s = sessionWith([ev.accepted('m1'), ev.claimed('m1')]);
    expectRefusal(s, (x) => x.append({ type: 'inbox/withdrawn', messageId: 'm1' }), { code: 'INBOX_STATE', field: 'messageId', seq: 2 });
  });

  it('survives a restore: the withdrawn message stays out of the inbox', () => {
    const s = sessionWith([ev.accepted('m1'), ev.accepted('m2')]);
    s.append({ type: 'inbox/withdrawn', messageId: 'm2' });
    const back = Session.restore(s.header, s.events);
    assert.deepEqual(back.unclaimedInbox, ['m1']);
  });
});
