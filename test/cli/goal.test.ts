import assert from 'node:assert/strict';
import type { GoalSnapshot, SessionEvent } from '../../src/core/session/events';
import { arbor, cliWorld } from '../support/cli';

describe('cli: arbor goal set / resume / pause / clear / limit in real processes', () => {
  const w = cliWorld('arbor-cli-goal-');

  async function newSession(): Promise<string> {
    const r = await arbor(['run', ...w.common, 'hello']);
    assert.equal(r.code, 0, r.stderr);
    return /session (\S+)/.exec(r.stderr)![1];
  }
  async function goalOf(id: string): Promise<GoalSnapshot | null | undefined> {
    const r = await arbor(['log', ...w.common.slice(0, 4), id]);
    const evs = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as SessionEvent);
    return evs.flatMap((e) => (e.type === 'goal/change' ? [e.goal] : [])).at(-1);
  }

  it('set drives rounds until the limit (exit 1); resume is refused until the limit is raised; then it drives again', async () => {
    const id = await newSession();
    const set = await arbor(['goal', 'set', ...w.common, id, 'polish', 'the', 'docs', '--max-rounds', '2']);
    assert.equal(set.code, 1, set.stderr);
    assert.match(set.stderr, /goal: blocked · 2\/2 \(round-limit/);
    assert.equal(w.server.requests.length, 3);
    assert.match(String(w.server.requests[2].body.messages.at(-1)?.content), /polish the docs/);

    const refused = await arbor(['goal', 'resume', ...w.common, id]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /ROUNDS_EXHAUSTED/);
    assert.equal(w.server.requests.length, 3);

    const limit = await arbor(['goal', 'limit', ...w.common, id, '3']);
    assert.equal(limit.code, 0, limit.stderr);
    assert.match(limit.stderr, /goal: blocked · 2\/3/);
    // A new process: the goal is disarmed until the human resumes it there.
    const resumed = await arbor(['goal', 'resume', ...w.common, id]);
    assert.equal(resumed.code, 1);
    assert.match(resumed.stderr, /goal: blocked · 3\/3 \(round-limit/);
    assert.equal(w.server.requests.length, 4);
  });

  it('exits 0 when the model completes the goal; pause and clear only write the change', async () => {
    const id = await newSession();
    w.server.enqueue({ toolCalls: [{ name: 'goal', arguments: { action: 'complete', note: 'docs polished' } }] }, { text: 'done' });
    const set = await arbor(['goal', 'set', ...w.common, id, 'polish the docs']);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stderr, /goal: complete · 1\/10 — docs polished/);
    assert.equal((await arbor(['goal', 'pause', ...w.common, id])).code, 1); // a complete goal cannot be paused
    const clear = await arbor(['goal', 'clear', ...w.common, id]);
    assert.equal(clear.code, 0, clear.stderr);
    assert.equal(await goalOf(id), null);
    const requests = w.server.requests.length;
    const pause = await arbor(['goal', 'pause', ...w.common, id]);
    assert.equal(pause.code, 1);
    assert.match(pause.stderr, /NO_GOAL/);
    assert.equal(w.server.requests.length, requests);
  });

  it('refuses --max-rounds 0, -1, 1.5, 1e12 and junk as bad usage (exit 2), writing nothing', async () => {
    const id = await newSession();
    for (const bad of ['0', '-1', '1.5', '1e12', 'ten']) {
      const r = await arbor(['goal', 'set', ...w.common, id, 'x', `--max-rounds=${bad}`]);
      assert.equal(r.code, 2, `${bad}: ${r.stderr}`);
      assert.match(r.stderr, /round limit must be a whole number from 1 to 1000/);
    }
    assert.equal(await goalOf(id), undefined);
    assert.equal((await arbor(['goal', 'frob', ...w.common, id])).code, 2);
    assert.equal((await arbor(['goal', 'set', ...w.common, id])).code, 2);
  });
});
