import assert from 'node:assert/strict';
import * as net from 'node:net';
import { PriceBook } from '../../../src/core/cost/prices';
import { spendOf } from '../../../src/core/cost/spend';
import type { EventDraft, SessionEvent, SessionHeader } from '../../../src/core/session/events';
import { summarize } from '../../../src/core/session/summary';
import { makeHarness } from '../../support/harness';
import { ModelServer } from '../../support/model-server';

// Issue 21.7: a turn whose request never reached the provider (offline, DNS failure: nothing
// came back) costs nothing; one the provider answered without usage is still estimated.

const H: SessionHeader = { id: 's-1', createdAt: '2025-06-01T09:00:00.000Z', origin: 'user' };
const at = '2025-06-01T09:00:00.000Z';
const log = (drafts: EventDraft[]): SessionEvent[] => drafts.map((d, seq) => ({ ...d, seq, at }) as SessionEvent);
const header: EventDraft = { type: 'request/header', model: 'deepseek-chat', provider: 'p', bytes: 4_000_000, headBytes: 1, headHash: 'h', prefixHash: 'p' };

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

describe('cost: a request that never reached the provider', () => {
  it('the fold prices an unreached request at nothing, and a reached one that failed at its prompt', () => {
    const unreached = summarize(
      H,
      log([
        { type: 'turn/start', turnId: 't' },
        header,
        { type: 'turn/end', turnId: 't', stopReason: 'error', error: 'x', errorCode: 'connection', unreached: true },
      ]),
    );
    assert.deepEqual(unreached.tokens, { prompt: 0, completion: 0, cacheHit: 0 });
    assert.equal(unreached.estimated, false);
    assert.equal(unreached.inflightPrompt, undefined);
    assert.equal(spendOf(unreached, new PriceBook()).costUsd, 0);

    const reached = summarize(
      H,
      log([{ type: 'turn/start', turnId: 't' }, header, { type: 'turn/end', turnId: 't', stopReason: 'error', error: 'x', errorCode: 'server' }]),
    );
    assert.equal(reached.tokens.prompt, 1_000_000);
    assert.equal(reached.estimated, true);
  });

  it('a turn against a closed port ends unreached and its session spent nothing; a 500 is still estimated', async () => {
    const server = await ModelServer.start();
    const offline = await makeHarness(server, {
      model: { baseURL: `http://127.0.0.1:${await closedPort()}/v1`, name: 'deepseek-chat', apiKey: 'k', maxRetries: 0, timeoutMs: 10_000 },
    });
    const online = await makeHarness(server);
    try {
      const a = await offline.h.createSession();
      await a.accept('hello');
      await a.idle();
      const end = a.session.events.at(-1);
      assert.ok(end?.type === 'turn/end');
      assert.deepEqual([end.stopReason, end.errorCode, end.unreached], ['error', 'connection', true]);
      const s = offline.h.store.summaryOf(a.id) ?? (await offline.h.store.summary(a.id));
      assert.deepEqual(s.tokens, { prompt: 0, completion: 0, cacheHit: 0 });
      assert.equal(s.estimated, false);

      server.enqueue({ fault: { kind: 'status', status: 500 } });
      const b = await online.h.createSession();
      await b.accept('hello');
      await b.idle();
      const end2 = b.session.events.at(-1);
      assert.ok(end2?.type === 'turn/end');
      assert.equal(end2.unreached, undefined);
      const s2 = online.h.store.summaryOf(b.id) ?? (await online.h.store.summary(b.id));
      assert.ok(s2.tokens.prompt > 0, 'a request the provider answered is priced at its estimate');
    } finally {
      await offline.cleanup();
      await online.cleanup();
      await server.stop();
    }
  });
});
