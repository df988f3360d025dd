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

  it('refuses an unconfined action under a ceiling narrower than full-access before the port, naming the ceiling and the way out', async () => {
    const port = scriptedApproval([], 'allow');
    const out = { ...request, unconfined: true as const };
    for (const [sandbox, by, says] of [
      ['read-only', 'cli-sandbox', /--sandbox read-only.*rerun with --sandbox full-access/],
      ['workspace-write', 'cli-sandbox', /--sandbox workspace-write/],
      ['read-only', 'restricted-mode', /Restricted Mode.*trust the workspace/],
    ] as const) {
      const a = await decideApproval(ctx({ approval: port, ceiling: { sandbox, by } }), out);
      assert.equal(a.approved, false);
      assert.equal(a.outcome, 'ceiling');
      assert.match(a.reason!, says);
    }
    assert.equal(port.requests.length, 0, 'no port was asked');
    // Within the ceiling's mode (a protected-path write), or under full-access, it is still a question.
    assert.equal((await decideApproval(ctx({ approval: port, ceiling: { sandbox: 'workspace-write', by: 'cli-sandbox' } }), request)).approved, true);
    assert.equal((await decideApproval(ctx({ approval: port, ceiling: { sandbox: 'full-access', by: 'cli-sandbox' } }), out)).approved, true);
    assert.equal(port.requests.length, 2);
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
