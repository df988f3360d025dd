import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { harnessPerTest } from '../../support/harness';

// Issue 10.2: one assistant message's tool calls run in parallel; calls that touch the same
// file must still run one after another, in call order, so every reported edit is in the file.
describe('agent: parallel tool calls on one file (issue 10.2)', () => {
  const w = harnessPerTest();

  it('applies all seven edit_file calls of one message, in call order, and the later of two write_files wins whole', async () => {
    const lines = Array.from({ length: 7 }, (_, i) => `line ${i + 1}: todo`);
    fs.writeFileSync(path.join(w.t.workspace, 'notes.txt'), `${lines.join('\n')}\n`);
    fs.mkdirSync(path.join(w.t.workspace, 'sub'));
    const first = 'A'.repeat(512 * 1024);
    const second = 'B'.repeat(128 * 1024);
    w.server.enqueue(
      {
        toolCalls: [
          // Six independent edits, then one that only matches once the first has been applied.
          ...[1, 2, 3, 4, 5, 6].map((n) => ({
            id: `e${n}`,
            name: 'edit_file',
            arguments: { path: 'notes.txt', oldText: `line ${n}: todo`, newText: `line ${n}: done` },
          })),
          { id: 'e7', name: 'edit_file', arguments: { path: './sub/../notes.txt', oldText: 'line 1: done', newText: 'line 1: done twice' } },
          // Two names of one file: the second call's content must be the file, whole.
          { id: 'w1', name: 'write_file', arguments: { path: 'big.txt', content: first } },
          { id: 'w2', name: 'write_file', arguments: { path: 'sub/../big.txt', content: second } },
        ],
      },
      { text: 'all done' },
    );
    const agent = await w.t.h.createSession();
    await agent.accept('finish the notes and write big.txt');
    await agent.idle();
    assert.equal(agent.lastTurn?.stopReason, 'completed');

    const results = agent.session.events.filter((e) => e.type === 'tool/result');
    assert.deepEqual(
      results.map((e) => e.type === 'tool/result' && e.callId),
      ['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'w1', 'w2'],
    );
    for (const r of results) assert.ok(r.type === 'tool/result' && !r.isError, r.type === 'tool/result' ? r.content : '');
    const edited = fs.readFileSync(path.join(w.t.workspace, 'notes.txt'), 'utf8');
    const expected = ['line 1: done twice', ...[2, 3, 4, 5, 6].map((n) => `line ${n}: done`), 'line 7: todo'];
    assert.equal(edited, `${expected.join('\n')}\n`, 'every reported edit is in the file');
    const big = fs.readFileSync(path.join(w.t.workspace, 'big.txt'), 'utf8');
    assert.ok(big === second, `big.txt is the second write whole (length ${big.length}, starts ${JSON.stringify(big.slice(0, 3))})`);
  });
});
