import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeHarness } from '../support/harness';
import { FAKE_CODEX } from './fake-codex';
import { assertValidTurn, finishedChild, harnessAndHomePerTest, ofType, programHome } from './world';

// A program that plays `claude -p --output-format stream-json` and names its model with 1 MB,
// then makes 200 small tool calls (session 49): the name is the program's word, and each of the
// child's assistant messages carries it — it must be cut like the other names a program gives.
const FAKE_CLAUDE = `#!/usr/bin/env node
if (process.argv.includes('--version')) { console.log('9.9.9 (Claude Code)'); process.exit(0); }
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const model = 'm'.repeat(Number(process.env.FAKE_MODEL_BYTES));
out({ type: 'system', subtype: 'init', model, session_id: 'fake-claude-session' });
for (let i = 0; i < Number(process.env.FAKE_CALLS); i++) {
  out({ type: 'assistant', message: { model, content: [{ type: 'tool_use', id: 'c' + i, name: 'Bash', input: { command: 'true' } }] } });
  out({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'c' + i, content: 'ok' }] } });
}
out({ type: 'assistant', message: { model, content: [{ type: 'text', text: 'all done' }] } });
out({ type: 'result', subtype: 'success', result: 'all done', usage: { input_tokens: 10, output_tokens: 2 } });
`;

describe('remote: hostile Claude Code and Codex streams (real processes)', function () {
  this.timeout(120_000);
  const w = harnessAndHomePerTest();

  it('a 1 MB model name on 200 tool calls: the name is cut, the child log stays within the turn bound', async () => {
    w.home = programHome('fake-claude');
    const fake = path.join(w.home, 'fake-claude');
    fs.writeFileSync(fake, FAKE_CLAUDE, { mode: 0o755 });
    w.t = await makeHarness(w.server, { remote: { claudeCode: { command: fake, env: { FAKE_MODEL_BYTES: '1000000', FAKE_CALLS: '200' } } } });
    const { run, r } = await finishedChild(w.t, 'claude-code', 'go');
    assert.equal(r.stopReason, 'completed', r.error);
    const s = await w.t.h.store.inspect(run.id);
    assertValidTurn(s.events);
    assert.equal(ofType(s.events, 'tool/result').length, 200);
    const bytes = s.events.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)), 0);
    assert.ok(bytes < 2 * 1024 * 1024, `the child's log holds ${bytes} bytes`);
    for (const m of ofType(s.events, 'assistant/message')) assert.ok(m.model.length <= 200, `a model name of ${m.model.length} characters`);
  });

  it('event types named "__proto__", "hasOwnProperty", "__defineGetter__": unknown types, skipped, the turn completes', async () => {
    w.home = programHome('fake-codex');
    const fake = path.join(w.home, 'fake-codex');
    fs.writeFileSync(fake, FAKE_CODEX, { mode: 0o755 });
    w.t = await makeHarness(w.server, { remote: { codex: { command: fake, env: { FAKE_MODE: 'proto' } } } });
    const { r } = await finishedChild(w.t, 'codex', 'go');
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(r.text, 'survived the prototype');
  });
});
