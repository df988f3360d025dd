import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../../src/core/session/events';
import type { Session } from '../../../src/core/session/session';
import type { Store } from '../../../src/core/store/store';
import { startOf, write } from '../checkpoint/fixture';
import { eventsOf, ofType, subagentWorld } from './helpers';

// Every writer of a released child's log takes turns through the store's one gate per session
// (decision 0129): a quiet message to it (inbound.ts `deliverToReleased`), a rewind's record
// (`appendWithoutFold`) and a cold resume. Before, each opened its own writer at the length it
// read: a message whose read fell between the record's seq and its commit was refused SEQ_GAP
// (its sender saw an error, its views had heard it at a seq the record holds), and a record that
// landed while a cold resume read the log left the resumed agent's next write refused. The seams
// below hold one real write open — the store's own append and read, the log real files — at the
// instant that decides the race, every round, so it is met every time rather than by chance.

const ROUNDS = 6;
/** How long a held write waits for the other writer to reach the log before it goes on (it never does once they take turns). */
const HOLD_MS = 150;

describe('a released child’s log: its writers take turns (decision 0129)', function () {
  this.timeout(120_000);
  const w = subagentWorld({}, { gates: false });
  const file = (rel: string) => path.join(fs.realpathSync(w.t.workspace), rel);

  /** A continuable child that wrote x.txt, settled and released (its log on disk only). */
  async function releasedChild(): Promise<string> {
    w.script.on('c', { toolCalls: [write('x.txt', 'from c\n')] }, { text: 'c wrote x' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] write x', label: 'c' });
    await w.t.h.settle();
    assert.equal(w.t.h.resident(childId), undefined, 'released after settling');
    assert.equal(fs.readFileSync(file('x.txt'), 'utf8'), 'from c\n');
    return childId;
  }

  /** Every event the store's listeners heard for `id`, at the seq it was heard. */
  function heard(store: Store, id: string): SessionEvent[] {
    const out: SessionEvent[] = [];
    store.onStaged((x, e) => {
      if (x === id) out.push(e);
    });
    return out;
  }

  /** What the listeners heard is what the log holds, seq by seq: nothing heard at a seq another event took, nothing lost. */
  async function assertHeardIsLog(id: string, from: number, staged: readonly SessionEvent[]): Promise<void> {
    const log = (await w.t.h.store.readEvents(id)).slice(from);
    const key = (e: SessionEvent) => `${e.seq} ${e.type} ${JSON.stringify(e)}`;
    assert.deepEqual(staged.map(key), log.map(key));
  }

  it(`a quiet message to a released child while a rewind records: neither is refused, both are in the log once (${ROUNDS} rounds)`, async () => {
    const child = await releasedChild();
    const store = w.t.h.store;
    const from = (await store.readEvents(child)).length;
    const staged = heard(store, child);
    // The seam: the rewind's record is held at the store's append; the message is sent then. Its
    // write, once staged (its seq read), lets the record's append go first — the order that refused
    // the message before. Taking turns, the message waits for the record and is never staged meanwhile.
    const append = store.append.bind(store);
    let letRecordGo: (() => void) | undefined;
    let sendNow: (() => void) | undefined;
    store.append = (id, events) => {
      if (id !== child || events[0]?.type !== 'checkpoint' || !sendNow) return append(id, events);
      const send = sendNow;
      sendNow = undefined;
      return new Promise<void>((resolve, reject) => {
        letRecordGo = () => {
          letRecordGo = undefined;
          append(id, events).then(resolve, reject);
        };
        send();
        setTimeout(() => letRecordGo?.(), HOLD_MS);
      });
    };
    store.onStaged((id, e) => {
      if (id === child && e.type === 'user/message') letRecordGo?.();
    });
    let undoOf: number | undefined;
    for (let i = 0; i < ROUNDS; i++) {
      const plan =
        undoOf === undefined
          ? await w.t.h.checkpoints.plan({ sessionId: child, toSeq: await startOf(w.t.h, child) })
          : await w.t.h.checkpoints.planUndo(child, undoOf);
      let message!: Promise<void>;
      const sent = new Promise<void>((r) => {
        sendNow = () => {
          message = w.t.h.subagents.deliver(child, `note ${i}`, { kind: 'subagent-report', fromSession: `${child}.g`, mode: 'quiet' }, true);
          r();
        };
      });
      const rewind = w.t.h.checkpoints.apply(plan);
      const [r] = await Promise.allSettled([rewind]);
      await sent;
      const [m] = await Promise.allSettled([message]);
      assert.equal(m.status, 'fulfilled', `round ${i}: the message was refused: ${m.status === 'rejected' ? String(m.reason) : ''}`);
      assert.equal(r.status, 'fulfilled', `round ${i}: the rewind failed: ${r.status === 'rejected' ? String(r.reason) : ''}`);
      const out = (r as PromiseFulfilledResult<Awaited<typeof rewind>>).value;
      undoOf = undoOf === undefined ? out.seq : undefined;
      assert.equal(fs.existsSync(file('x.txt')), undoOf === undefined, `round ${i}: x.txt as the rewind or its undo left it`);
    }
    const log = await eventsOf(w.t.h, child);
    assert.deepEqual(
      ofType(log, 'user/message')
        .filter((e) => e.source.kind === 'subagent-report')
        .map((e) => e.text),
      Array.from({ length: ROUNDS }, (_, i) => `note ${i}`),
      'every message once, in the order sent',
    );
    assert.equal(ofType(log.slice(from), 'checkpoint').length, ROUNDS, 'every rewind recorded once');
    await assertHeardIsLog(child, from, staged);
  });

  it('a one-shot child leaving residency: a policy switch meanwhile waits for its last write, neither is refused', async () => {
    w.script.on('o', { text: 'once' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[o]] once', label: 'o' });
    const child = run.id;
    await run.result;
    const store = w.t.h.store;
    const from = (await store.readEvents(child)).length;
    const staged = heard(store, child);
    // The seam: the one-shot's own next write (a resident agent's, through its writer) is held at
    // the store's append while it is disposed: it has left the resident map, its write not yet
    // durable. A switch asked for then must wait for it — not read the log one event short.
    const append = store.append.bind(store);
    let letOwnGo: (() => void) | undefined;
    store.append = (id, events) => {
      if (id !== child || events[0]?.type !== 'budget/set' || letOwnGo) return append(id, events);
      return new Promise<void>((resolve, reject) => {
        letOwnGo = () => append(id, events).then(resolve, reject);
      });
    };
    const own = run.localAgent.append({ type: 'budget/set', budget: null, source: 'user' });
    const disposed = run.dispose();
    await new Promise((r) => setImmediate(r));
    assert.equal(w.t.h.resident(child), undefined, 'no longer resident while its write is held');
    const policy = w.t.h.setPolicy(child, { sandbox: 'read-only' });
    await new Promise((r) => setTimeout(r, HOLD_MS));
    letOwnGo!();
    const [o, p, d] = await Promise.allSettled([own, policy, disposed]);
    assert.equal(o.status, 'fulfilled', `its own write was refused: ${o.status === 'rejected' ? String(o.reason) : ''}`);
    assert.equal(p.status, 'fulfilled', `the switch was refused: ${p.status === 'rejected' ? String(p.reason) : ''}`);
    assert.equal(d.status, 'fulfilled');
    const log = (await store.readEvents(child)).slice(from);
    assert.deepEqual(
      log.map((e) => e.type),
      ['budget/set', 'sandbox/mode'],
      'its write, then the switch',
    );
    await assertHeardIsLog(child, from, staged);
  });

  it(`a rewind recorded while a follow-up cold-resumes the child: the follow-up is accepted and runs, the record kept (${ROUNDS} rounds)`, async () => {
    const child = await releasedChild();
    const store = w.t.h.store;
    const from = (await store.readEvents(child)).length;
    const staged = heard(store, child);
    // The seam: the cold resume's read of the log is held once it has read it; the rewind is
    // applied then, and the read handed back once its record is durable — the order that left the
    // resumed agent a stale log before. Taking turns, the record waits for the resume to finish.
    const inspect = store.inspect.bind(store);
    let duringResume: (() => Promise<void>) | undefined;
    store.inspect = async (id) => {
      const hook = id === child ? duringResume : undefined;
      duringResume = undefined;
      const s: Session = await inspect(id);
      if (hook) await hook();
      return s;
    };
    let undoOf: number | undefined;
    for (let i = 0; i < ROUNDS; i++) {
      const plan =
        undoOf === undefined
          ? await w.t.h.checkpoints.plan({ sessionId: child, toSeq: await startOf(w.t.h, child) })
          : await w.t.h.checkpoints.planUndo(child, undoOf);
      let rewind!: Promise<Awaited<ReturnType<typeof w.t.h.checkpoints.apply>>>;
      duringResume = async () => {
        rewind = w.t.h.checkpoints.apply(plan);
        const recorded = new Promise<void>((r) => {
          const off = store.onAppended((id, events) => {
            if (id === child && events.some((e) => e.type === 'checkpoint')) {
              off();
              r();
            }
          });
        });
        await Promise.race([recorded, new Promise((r) => setTimeout(r, HOLD_MS))]);
      };
      w.script.on('c', { text: `answer ${i}` });
      const [f] = await Promise.allSettled([w.t.h.subagents.followup(w.root.id, child, `[[c]] question ${i}`)]);
      const [r] = await Promise.allSettled([rewind]);
      assert.equal(f.status, 'fulfilled', `round ${i}: the follow-up was refused: ${f.status === 'rejected' ? String(f.reason) : ''}`);
      assert.equal((f as PromiseFulfilledResult<{ path: string }>).value.path, 'cold-resume');
      assert.equal(r.status, 'fulfilled', `round ${i}: the rewind failed: ${r.status === 'rejected' ? String(r.reason) : ''}`);
      undoOf = undoOf === undefined ? (r as PromiseFulfilledResult<Awaited<typeof rewind>>).value.seq : undefined;
      await w.t.h.settle();
      assert.equal(w.t.h.resident(child), undefined, `round ${i}: released again`);
      assert.equal(fs.existsSync(file('x.txt')), undoOf === undefined, `round ${i}: x.txt as the rewind or its undo left it`);
    }
    const log = await eventsOf(w.t.h, child);
    assert.deepEqual(
      ofType(log, 'assistant/message')
        .slice(-ROUNDS)
        .map((e) => e.text),
      Array.from({ length: ROUNDS }, (_, i) => `answer ${i}`),
      'every follow-up ran its turn',
    );
    assert.equal(ofType(log.slice(from), 'checkpoint').length, ROUNDS, 'every rewind recorded once');
    await assertHeardIsLog(child, from, staged);
  });
});
