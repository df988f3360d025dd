import * as assert from 'node:assert/strict';
import { type ApprovalContext, type ApprovalPort, autoApprove, decideApproval, neverApprove } from '../../../src/core/policy/approval';
import { scriptedApproval } from '../../support/scripted-approval';

const request = { tool: 'run_command', summary: '$ rm -rf build', reason: 'commands are not confined' };

function ctx(over: Partial<ApprovalContext> = {}): ApprovalContext {
  return { sessionId: 'S1', approvalPolicy: 'ask', signal: new AbortController().signal, ...over };
}

describe('decideApproval', () => {
  it('denies under policy never without asking the port', async () => {
    const port = scriptedApproval([], 'allow');
    assert.equal((await decideApproval(ctx({ approvalPolicy: 'never', approval: port }), request)).approved, false);
    assert.equal(port.requests.length, 0);
    assert.equal((await decideApproval(ctx({ approvalPolicy: 'never', approval: port }), request)).outcome, 'policy-never');
  });

  it('asks the port under policy ask, with the session id filled in', async () => {
    const port = scriptedApproval(['allow', 'deny']);
    assert.equal((await decideApproval(ctx({ approval: port }), request)).approved, true);
    assert.equal((await decideApproval(ctx({ approval: port }), request)).approved, false);
    assert.deepEqual(port.requests, [
      { sessionId: 'S1', ...request },
      { sessionId: 'S1', ...request },
    ]);
  });

  it('denies when there is no port to ask', async () => {
    assert.deepEqual(await decideApproval(ctx(), request), { approved: false, outcome: 'no-port' });
  });

  it('denies when the port throws or answers nonsense', async () => {
    const throwing: ApprovalPort = { ask: async () => Promise.reject(new Error('ui gone')) };
    assert.deepEqual(await decideApproval(ctx({ approval: throwing }), request), { approved: false, outcome: 'port-failed' });
    const nonsense = { ask: async () => 'yes' } as unknown as ApprovalPort;
    assert.deepEqual(await decideApproval(ctx({ approval: nonsense }), request), { approved: false, outcome: 'port-failed' });
  });

  it('an abort settles a pending ask as denied, and the port sees the signal', async () => {
    const ac = new AbortController();
    let seen: AbortSignal | undefined;
    const port = scriptedApproval((_, signal) => {
      seen = signal;
      return new Promise(() => undefined); // a human who never answers
    });
    const pending = decideApproval(ctx({ approval: port, signal: ac.signal }), request);
    setTimeout(() => ac.abort(), 20);
    assert.deepEqual(await pending, { approved: false, outcome: 'aborted' });
    assert.equal(seen, ac.signal);
  });

  it('does not ask at all when already aborted, and an allow that races an abort loses', async () => {
    const aborted = new AbortController();
    aborted.abort();
    const port = scriptedApproval([], 'allow');
    assert.equal((await decideApproval(ctx({ approval: port, signal: aborted.signal }), request)).approved, false);
    assert.equal(port.requests.length, 0);

    const ac = new AbortController();
    const late: ApprovalPort = { ask: async () => (ac.abort(), 'allow') };
    assert.deepEqual(await decideApproval(ctx({ approval: late, signal: ac.signal }), request), { approved: false, outcome: 'aborted' });
  });
});

describe('approval ports', () => {
  it('neverApprove denies and autoApprove allows (CLI --approval never|auto)', async () => {
    assert.equal(await neverApprove.ask({ sessionId: 'S', ...request }), 'deny');
    assert.equal(await autoApprove.ask({ sessionId: 'S', ...request }), 'allow');
    assert.equal((await decideApproval(ctx({ approval: autoApprove }), request)).approved, true);
    assert.equal((await decideApproval(ctx({ approval: neverApprove }), request)).approved, false);
  });

  it('scriptedApproval answers in order, then the fallback, and records every request', async () => {
    const port = scriptedApproval(['allow']);
    const r = { sessionId: 'S', ...request };
    assert.equal(await port.ask(r), 'allow');
    assert.equal(await port.ask(r), 'deny');
    assert.equal(port.requests.length, 2);
    const byFn = scriptedApproval((req) => (req.summary.includes('rm') ? 'deny' : 'allow'));
    assert.equal(await byFn.ask(r), 'deny');
    assert.equal(await byFn.ask({ ...r, summary: '$ ls' }), 'allow');
  });
});
