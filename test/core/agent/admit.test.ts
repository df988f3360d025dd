import assert from 'node:assert/strict';
import { Agent } from '../../../src/core/agent/agent';
import type { InboxAcceptedEvent } from '../../../src/core/session/events';
import { agentConfigOf, harnessPerTest } from '../../support/harness';

describe('agent: the admit hook checks a message just before it runs', () => {
  const w = harnessPerTest();

  it('a refused message is claimed without a turn; the next one runs; a throwing hook refuses (fail closed)', async () => {
    const seen: string[] = [];
    const agent = new Agent({
      ...(await agentConfigOf(w.t.h)),
      admit: (msg: InboxAcceptedEvent) => {
        seen.push(msg.text);
        if (msg.text === 'boom') throw new Error('hook bug');
        return msg.text !== 'skip';
      },
    });
    await agent.accept('skip');
    await agent.idle();
    await agent.accept('boom');
    await agent.idle();
    await agent.accept('run');
    await agent.idle();
    assert.deepEqual(seen, ['skip', 'boom', 'run']);
    const evs = agent.session.events;
    assert.equal(evs.filter((e) => e.type === 'turn/start').length, 1);
    assert.equal(evs.filter((e) => e.type === 'inbox/claimed').length, 3);
    assert.deepEqual(
      evs.flatMap((e) => (e.type === 'user/message' ? [e.text] : [])),
      ['run'],
    );
    assert.equal(w.server.requests.length, 1);
    assert.equal(agent.inboxSize, 0);
  });
});
