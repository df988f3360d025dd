import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Script } from '../core/subagent/helpers';
import { arbor, cliWorld } from '../support/cli';

describe('cli: arbor run / send / sessions / log in real processes', () => {
  const w = cliWorld('arbor-cli-');

  it('prints help and exits 0; bad usage exits 2 with a hint', async () => {
    const help = await arbor(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /arbor run \[options\] PROMPT/);
    const bad = await arbor(['run', '--sandbox', 'everything', 'x']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--sandbox must be one of read-only, workspace-write, full-access/);
    assert.equal((await arbor(['frobnicate'])).code, 2);
    assert.equal((await arbor(['run'])).code, 2);
    const nokey = await arbor(['run', '--store', w.store, '--workspace', w.ws, '--base-url', 'https://api.example.com', 'x']);
    assert.equal(nokey.code, 2);
    assert.match(nokey.stderr, /No API key/);
  });

  it('runs a real multi-tool turn with --json: every event one JSON line, tagged with its session', async () => {
    fs.writeFileSync(path.join(w.ws, 'README.md'), '# Demo\nhello\n');
    w.server.enqueue(
      {
        toolCalls: [
          { name: 'list_files', arguments: {} },
          { name: 'read_file', arguments: { path: 'README.md' } },
        ],
      },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'README.md', oldText: 'hello', newText: 'hello, world' } }] },
      { text: 'Edited README.md.' },
    );
    const r = await arbor(['run', ...w.common, '--json', 'greet the world in README.md']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { session: string; type: string; seq: number });
    const id = lines[0].session;
    assert.ok(lines.every((l) => l.session === id && typeof l.seq === 'number'));
    assert.deepEqual(
      lines.map((l) => l.seq),
      lines.map((_, i) => i),
    );
    assert.equal(lines.filter((l) => l.type === 'tool/result').length, 3);
    assert.equal(lines[lines.length - 1].type, 'turn/end');
    assert.equal(fs.readFileSync(path.join(w.ws, 'README.md'), 'utf8'), '# Demo\nhello, world\n');

    const list = await arbor(['sessions', '--json', '--store', w.store]);
    assert.equal(list.code, 0);
    const sessions = JSON.parse(list.stdout) as { id: string; events: number; origin: string }[];
    assert.deepEqual(
      sessions.map((s) => [s.id, s.origin, s.events]),
      [[id, 'user', lines.length]],
    );

    const log = await arbor(['log', id, '--store', w.store]);
    assert.equal(log.code, 0);
    assert.deepEqual(
      log.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).type),
      lines.map((l) => l.type),
    );
  });

  it('a new process continues an old session with send and the model sees the whole history', async () => {
    w.server.enqueue({ text: 'Noted: the code word is heron.' });
    const first = await arbor(['run', ...w.common, '--json', 'remember the code word heron']);
    assert.equal(first.code, 0, first.stderr);
    const id = JSON.parse(first.stdout.split('\n')[0]).session as string;
    w.server.enqueue({ text: 'The code word is heron.' });
    const second = await arbor(['send', ...w.common, id, 'what is the code word?']);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /The code word is heron\./);
    const msgs = w.server.requests[1].body.messages.slice(1).map((m) => `${m.role}:${m.content}`);
    assert.deepEqual(msgs, ['user:remember the code word heron', 'assistant:Noted: the code word is heron.', 'user:what is the code word?']);
    assert.equal((await arbor(['send', ...w.common, 'nope', 'hi'])).code, 2);
  });

  it('sessions and log on a folder that holds no store say so, exit 2, and create nothing there (issue 10.7)', async () => {
    const empty = path.join(w.dir, 'not-a-store');
    fs.mkdirSync(empty);
    for (const args of [
      ['sessions', '--store', empty],
      ['log', 'S1', '--store', empty],
      ['sessions', '--store', path.join(w.dir, 'missing')],
    ]) {
      const r = await arbor(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^arbor: No Arbor session store at .*; give the store with --store or \$ARBOR_STORE, or start one with 'arbor run'\./);
    }
    assert.deepEqual(fs.readdirSync(empty), []);
    assert.equal(fs.existsSync(path.join(w.dir, 'missing')), false);
    // Without --store, the default under the workspace is not created either.
    const r = await arbor(['sessions', '--workspace', w.ws]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(fs.existsSync(path.join(w.ws, '.arbor')), false);
  });

  it('exits 1 when the turn fails, with the reason on stderr', async () => {
    w.server.enqueue({ fault: { kind: 'status', status: 401 } });
    const r = await arbor(['run', ...w.common, 'hello']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /refused the API key \(401\)/);
  });

  it('a read-only run cannot write: the denial reaches the model and nothing lands on disk', async () => {
    w.server.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'no' } }] }, { text: 'I could not write.' });
    const r = await arbor(['run', ...w.common, '--sandbox', 'read-only', '--json', 'write x.txt']);
    assert.equal(r.code, 0, r.stderr);
    const res = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((e) => e.type === 'tool/result');
    assert.equal(res.isError, true);
    assert.match(res.content, /read-only/);
    assert.equal(fs.existsSync(path.join(w.ws, 'x.txt')), false);
  });
});

describe('cli: a delegation tree driven to settlement', () => {
  const w = cliWorld('arbor-cli-tree-');

  /** A scripted model: the root spawns a continuable child and forks; the child reports, then answers. */
  function script(): void {
    w.server.setFallback((body) => {
      // A quiet report joins the root's history at its next safe point, which under load can
      // fall after the settlement notice: the message the model answers is the last one that
      // is not such a report.
      const msgs = body.messages.filter((m) => !(m.role === 'user' && String(m.content ?? '').startsWith('[report from subagent')));
      const last = msgs[msgs.length - 1];
      const text = String(last.content ?? '');
      const toolNames = (body.tools as { function: { name: string } }[] | undefined)?.map((t) => t.function.name) ?? [];
      if (last.role === 'user' && text === 'build the tree')
        return { toolCalls: [{ name: 'subagent', arguments: { prompt: 'CHILD-TASK: check the docs', label: 'docs', mode: 'continuable' } }] };
      if (last.role === 'tool' && text.includes('"status": "started"')) return { text: 'Child started.' };
      if (last.role === 'user' && text.startsWith('CHILD-TASK') && toolNames.includes('report'))
        return { toolCalls: [{ name: 'report', arguments: { message: 'docs look fine so far', mode: 'quiet' } }] };
      if (last.role === 'tool' && text.startsWith('Reported to')) return { text: 'CHILD-FINAL: docs are fine' };
      if (last.role === 'user' && text.startsWith('[subagent docs settled'))
        return { toolCalls: [{ name: 'subagent_fork', arguments: { prompt: 'FORK-TASK: double-check', label: 'checker' } }] };
      if (last.role === 'user' && text.startsWith('FORK-TASK')) return { text: 'FORK-FINAL: checked' };
      if (last.role === 'tool' && text.includes('FORK-FINAL')) return { text: 'ROOT-FINAL: all done' };
      if (last.role === 'user' && text === 'and one more thing') return { text: 'CHILD-FOLLOWUP: done too' };
      return { text: `unscripted: ${text.slice(0, 40)}` };
    });
  }

  it('runs root, a continuable child (report + settlement) and a forked one-shot child until all settle', async () => {
    script();
    const r = await arbor(['run', ...w.common, '--json', 'build the tree']);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { session: string; type: string; text?: string; source?: { kind: string } });
    const sessions = new Set(events.map((e) => e.session));
    assert.equal(sessions.size, 3, 'root, child and fork all emitted events');
    const list = JSON.parse((await arbor(['sessions', '--json', '--store', w.common[1]])).stdout) as {
      id: string;
      origin: string;
      parentSession?: string;
      delegationDepth?: number;
    }[];
    const root = list.find((s) => s.origin === 'user')!;
    const child = list.find((s) => s.origin === 'subagent')!;
    const fork = list.find((s) => s.origin === 'fork')!;
    assert.equal(child.parentSession, root.id);
    assert.equal(fork.parentSession, root.id);
    assert.equal(child.delegationDepth, 1);
    const rootMsgs = events.filter((e) => e.session === root.id && e.type === 'user/message').map((e) => e.source?.kind);
    assert.ok(rootMsgs.includes('subagent-report'), 'the report reached the root');
    assert.equal(rootMsgs.filter((k) => k === 'subagent-settled').length, 1, 'exactly one settlement notice');
    const rootLast = events.filter((e) => e.session === root.id && e.type === 'assistant/message').pop();
    assert.equal(rootLast?.text, 'ROOT-FINAL: all done');
    // Every session ended its last turn completed: the whole tree settled.
    for (const id of [root.id, child.id, fork.id]) {
      const ends = events.filter((e) => e.session === id && e.type === 'turn/end') as unknown as { stopReason: string }[];
      assert.equal(ends[ends.length - 1].stopReason, 'completed', id);
    }

    // A new process reaches the child through cold resume.
    const s = await arbor(['send', ...w.common, '--json', child.id, 'and one more thing']);
    assert.equal(s.code, 0, s.stderr);
    const childLines = s.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.session === child.id && e.type === 'assistant/message');
    assert.equal(childLines[childLines.length - 1].text, 'CHILD-FOLLOWUP: done too');
    const req = w.server.requests.find((q) => q.body.messages[q.body.messages.length - 1].content === 'and one more thing')!;
    assert.ok(
      req.body.messages.some((m) => String(m.content).startsWith('CHILD-TASK')),
      'the resumed child sees its whole history',
    );
  });
  it('--max-children bounds the subagents asking the model at once; the rest wait their turn and all answer', async () => {
    const script = new Script(w.server);
    const tags = Array.from({ length: 12 }, (_, i) => `c${i}`);
    script.on('root', { toolCalls: tags.map((t) => ({ name: 'subagent', arguments: { prompt: `[[${t}]] part ${t}` } })) }, { text: 'ROOT: all parts done' });
    for (const t of tags) script.on(t, { text: `${t} done`, delayMs: 30 });
    const r = await arbor(['run', ...w.common, '--max-children', '2', '[[root]] do twelve parts']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /ROOT: all parts done/);
    assert.ok(w.server.maxInFlight <= 2, `${w.server.maxInFlight} requests in flight at once`);
    for (const t of tags) assert.equal(script.bodies(t).length, 1, t);
    const bad = await arbor(['run', ...w.common, '--max-children', '0', 'x']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--max-children must be a positive integer/);
    assert.match((await arbor(['--help'])).stdout, /--max-children N/);
  });
});
