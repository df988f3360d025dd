// A writing call cut by kill -9 (decision 0059, amended in s49): write_file's file was renamed into
// place, or a command had written, and the process died before the step's `checkpoint` record.
// The change stayed in the workspace with no record: a rewind past that turn never restored it.
// Each writing call now leaves what it found in the store before it runs; the next open records
// the cut call's change, the host says so, and a rewind restores it.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CallIntents } from '../../../src/core/checkpoint/call-intent';
import { blobId } from '../../../src/core/checkpoint/objects';
import { shadowDirOf } from '../../../src/core/checkpoint/shadow';
import { recoveryNotes } from '../../../src/core/recovered-work';
import { makeHarness } from '../../support/harness';
import { ModelServer } from '../../support/model-server';
import { Script } from '../subagent/helpers';
import { checkpointsOf, run, startOf, write } from './fixture';

describe('a writing call cut by a crash (kill -9 between its write and its step record)', () => {
  let server: ModelServer;
  let base: string;
  let ws: string;
  let storeDir: string;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-call-crash-')));
    ws = path.join(base, 'ws');
    fs.mkdirSync(ws);
    storeDir = path.join(base, 'store');
    fs.writeFileSync(path.join(ws, 'a.txt'), 'a0\n');
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  /** Start the host; resolves with the root's id and the process (killed by itself or by `kill`). */
  function crashHost(tag: string, victim: string): Promise<{ rootId: string; host: ChildProcess; exited: Promise<string | null> }> {
    const host = spawn(process.execPath, [path.join(__dirname, '..', '..', 'support', 'crash-call-host.js'), storeDir, ws, server.baseURL, tag, victim], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<string | null>((r) => host.once('exit', (_c, signal) => r(signal)));
    return new Promise((resolve, reject) => {
      let out = '';
      host.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /root (\S+)\n/.exec(out);
        if (m) resolve({ rootId: m[1], host, exited });
      });
      void exited.then(() => reject(new Error(`the host ended before its root started: ${out}`)));
    });
  }

  /** Rewinds past the cut call: what it left was found at the open, so each of its files asks first (here: restore). */
  async function rewindsTo(h: Awaited<ReturnType<typeof makeHarness>>['h'], rootId: string): Promise<void> {
    const plan = await h.checkpoints.plan({ sessionId: rootId, toSeq: await startOf(h, rootId) });
    for (const f of plan.files) assert.match(f.conflict?.text ?? '', /a crash cut short/, `${f.relative} asks first`);
    await h.checkpoints.apply(plan, {}, 'restore');
  }

  it("write_file's write landed: the next open records it, says so, and a rewind restores the file", async () => {
    new Script(server).on('w', { toolCalls: [write('a.txt', 'a1\n')] }, { text: 'done' });
    const { rootId, exited } = await crashHost('w', 'a.txt');
    assert.equal(await exited, 'SIGKILL');
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'a1\n', 'the write landed before the kill');

    const t = await makeHarness(server, { workspace: [ws], storeDir });
    try {
      const [rec] = t.h.recoveredWork.calls;
      assert.deepEqual(t.h.recoveredWork.calls, [{ sessionId: rootId, seq: rec?.seq, files: 1 }]);
      const cps = checkpointsOf((await t.h.readSession(rootId)).events);
      assert.equal(cps.length, 1);
      assert.deepEqual(
        cps[0].changes.map((c) => [path.basename(c.path), c.tool, c.before, c.after]),
        [['a.txt', 'write_file', blobId(Buffer.from('a0\n')), blobId(Buffer.from('a1\n'))]],
      );
      assert.match(recoveryNotes({ rewinds: [], applies: [], calls: t.h.recoveredWork.calls }).join('\n'), /1 file change.*recorded.*rewind/);
      await rewindsTo(t.h, rootId);
      assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'a0\n', 'the rewind restored what the cut call overwrote');
      assert.deepEqual(fs.readdirSync(path.join(storeDir, 'checkpoints', 'calls')), [], 'no intent left');
    } finally {
      await t.h.close();
    }
  });

  it('an edit made between the crash and the next open is never rewound silently: the plan asks, and keeping it keeps it', async () => {
    new Script(server).on('w', { toolCalls: [write('a.txt', 'a1\n')] }, { text: 'done' });
    const { rootId, exited } = await crashHost('w', 'a.txt');
    assert.equal(await exited, 'SIGKILL');
    fs.writeFileSync(path.join(ws, 'a.txt'), 'a1\nmy own line, written while Arbor was down\n');

    const t = await makeHarness(server, { workspace: [ws], storeDir });
    try {
      const plan = await t.h.checkpoints.plan({ sessionId: rootId, toSeq: await startOf(t.h, rootId) });
      assert.equal(plan.files.length, 1);
      assert.equal(plan.files[0].conflict?.reason, 'edited-since');
      assert.match(plan.files[0].conflict?.text ?? '', /a crash cut short.*cannot be told apart/);
      await assert.rejects(t.h.checkpoints.apply(plan), /need a choice first/, 'no choice given: refused, nothing written');
      await t.h.checkpoints.apply(plan, {}, 'keep');
      assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'a1\nmy own line, written while Arbor was down\n', 'the edit is kept');
    } finally {
      await t.h.close();
    }
  });

  it('a command that wrote and was under way: the next open records what it changed, and a rewind takes it back', async () => {
    new Script(server).on('c', { toolCalls: [run('echo b1 > b.txt; echo a2 > a.txt; sleep 2')] }, { text: 'done' });
    const { rootId, host, exited } = await crashHost('c', '-');
    const until = Date.now() + 30_000;
    while (!fs.existsSync(path.join(ws, 'b.txt')) || fs.readFileSync(path.join(ws, 'a.txt'), 'utf8') !== 'a2\n') {
      if (Date.now() > until) throw new Error('the command never wrote');
      await new Promise((r) => setTimeout(r, 20));
    }
    host.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 2500)); // the command's own sleep, had it outlived its host

    const t = await makeHarness(server, { workspace: [ws], storeDir });
    try {
      const cps = checkpointsOf((await t.h.readSession(rootId)).events);
      assert.equal(cps.length, 1, 'the cut command is recorded');
      assert.deepEqual(cps[0].changes.map((c) => [path.basename(c.path), c.tool]).sort(), [
        ['a.txt', 'run_command'],
        ['b.txt', 'run_command'],
      ]);
      await rewindsTo(t.h, rootId);
      assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'a0\n');
      assert.equal(fs.existsSync(path.join(ws, 'b.txt')), false, 'the file the command made is gone');
    } finally {
      await t.h.close();
    }
  });

  it('a step recorded before the crash is not recorded twice, and a call that changed nothing leaves no intent', async () => {
    new Script(server).on('r', { toolCalls: [write('a.txt', 'a1\n')] }, { toolCalls: [write('a.txt', 'a1\n')] }, { text: 'done' });
    const first = await makeHarness(server, { workspace: [ws], storeDir });
    const root = await first.h.createSession({ title: 'clean' });
    await root.accept('[[r]] go');
    await first.h.settle();
    const rootId = root.id;
    assert.deepEqual(fs.readdirSync(path.join(storeDir, 'checkpoints', 'calls')), [], 'every intent went with its step');
    const [recorded] = checkpointsOf((await first.h.readSession(rootId)).events);
    await first.h.close();
    // As a crash just after the record, before its intent's removal, would leave it: the first call's intent, put back.
    const c = recorded.changes[0];
    new CallIntents(storeDir).write({
      sessionId: rootId,
      callId: c.callId,
      tool: 'write_file',
      kind: 'file',
      root: c.root,
      path: c.path,
      before: c.before,
    });
    const t = await makeHarness(server, { workspace: [ws], storeDir });
    try {
      assert.deepEqual(t.h.recoveredWork.calls, []);
      assert.equal(checkpointsOf((await t.h.readSession(rootId)).events).length, 1, 'one record: the second write changed nothing');
      assert.deepEqual(fs.readdirSync(path.join(storeDir, 'checkpoints', 'calls')), [], 'the left intent is removed');
    } finally {
      await t.h.close();
    }
  });

  it('a cut call whose change cannot be recorded at the open is said (CALL_UNRECORDED), its intent kept; the next open records it', async () => {
    new Script(server).on('w', { toolCalls: [write('a.txt', 'a1\n')] }, { text: 'done' });
    const { rootId, exited } = await crashHost('w', 'a.txt');
    assert.equal(await exited, 'SIGKILL');
    // The shadow repository's fan-out folder for the cut write's new content is a file: storing that content fails.
    const id = blobId(Buffer.from('a1\n'));
    const fanout = path.join(shadowDirOf(storeDir, ws), 'objects', id.slice(0, 2));
    assert.equal(fs.existsSync(path.join(fanout, id.slice(2))), false, 'the killed step never stored it');
    fs.rmSync(fanout, { recursive: true, force: true });
    fs.writeFileSync(fanout, 'in the way\n');
    const intents = path.join(storeDir, 'checkpoints', 'calls');

    const t = await makeHarness(server, { workspace: [ws], storeDir });
    try {
      assert.equal(checkpointsOf((await t.h.readSession(rootId)).events).length, 0, 'nothing recorded');
      const [c] = t.h.recoveredWork.calls;
      assert.equal(c?.sessionId, rootId);
      assert.equal(c?.files, 0);
      assert.match(c?.unrecorded?.join('\n') ?? '', /write_file .*a\.txt.*EEXIST|write_file .*a\.txt.*ENOTDIR/);
      const notes = recoveryNotes({ rewinds: [], applies: [], calls: t.h.recoveredWork.calls }).join('\n');
      assert.match(notes, /^CALL_UNRECORDED: .*could not be recorded.*a rewind to before that turn would not restore.*next start/s);
      assert.equal(fs.readdirSync(intents).length, 1, 'the intent is kept for the next open');
    } finally {
      await t.h.close();
    }
    fs.rmSync(fanout);
    const t2 = await makeHarness(server, { workspace: [ws], storeDir });
    try {
      assert.deepEqual(
        t2.h.recoveredWork.calls.map((c) => [c.sessionId, c.files, c.unrecorded]),
        [[rootId, 1, undefined]],
      );
      await rewindsTo(t2.h, rootId);
      assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'a0\n', 'the rewind restored what the cut call overwrote');
      assert.deepEqual(fs.readdirSync(intents), []);
    } finally {
      await t2.h.close();
    }
  });
});
