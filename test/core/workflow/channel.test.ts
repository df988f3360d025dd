import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FromChild } from '../../../src/core/workflow/bridge';
import { guardChannel } from '../../../src/core/workflow/channel-guard';
import { type Confinement, scriptConfinement } from '../../../src/core/workflow/confine';
import { DEFAULT_ISOLATE, Isolate, permissionFlags, startProcess } from '../../../src/core/workflow/isolate';
import { dataOf, workflowWorld } from './helpers';

// Decision 0045 amended (session 49): assume a script escaped its `vm` context. It then holds
// the script process's `process`, whose only way out is the IPC pipe, and Node's own channel
// trusts that pipe. Each attack below is a raw entry run as the script process is run (the
// same bubblewrap, permission flags and empty environment, through `Isolate`); each must end
// the script process as a protocol breach, and leave the host running, its memory and its
// event loop its own.
const ATTACKS: Record<string, string> = {
  // Node's parser threw out of the channel's read callback: an uncaught exception in the host.
  'a frame that is not JSON': `require('node:fs').writeSync(process.channel.fd, '{not json\\n');`,
  // Node made a live server of it in the host, which kept the host's event loop alive for ever.
  'a listening server passed as a handle': `
    const s = require('node:net').createServer().listen(0, '127.0.0.1', () => process.send({ op: 'log', message: 'here' }, s));`,
  // An internal message with no handle: Node would answer it; it has no business on this pipe.
  'an internal NODE_ message': `process.send({ cmd: 'NODE_HANDLE_ACK' });`,
};

const servers = () => process.getActiveResourcesInfo().filter((r) => r === 'PipeServerWrap' || r === 'TCPServerWrap').length;

describe('workflow channel: an escaped script cannot crash, flood or hold the host through its IPC pipe', function () {
  this.timeout(60_000);
  let dir: string;
  let confinement: Confinement;

  before(async () => {
    const c = await scriptConfinement(undefined);
    assert.equal(c.confinement.kind, 'bubblewrap', `bubblewrap must work here for this suite: ${c.confinement.kind === 'none' ? c.confinement.reason : ''}`);
    confinement = c.confinement;
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-channel-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const [what, attack] of Object.entries(ATTACKS)) {
    it(`${what}: the process is ended as a breach, the host lives`, async () => {
      const entry = path.join(dir, 'attack.js');
      // Ready first, as the script process says; then the attack; then it waits to be ended.
      fs.writeFileSync(entry, `process.on('message', () => {}); process.send({ op: 'ready' });\n${attack}\nsetInterval(() => {}, 1000);`);
      const before = servers();
      let bad = 0;
      const heard: FromChild[] = [];
      let ticks = 0;
      const timer = setInterval(() => ticks++, 20);
      const iso = new Isolate({ onMessage: (m) => heard.push(m), onBadMessage: () => bad++ }, DEFAULT_ISOLATE, true, confinement, entry);
      try {
        const ended = await Promise.race([iso.ended, new Promise<undefined>((r) => setTimeout(() => r(undefined), 20_000))]);
        assert.ok(ended, 'the script process was ended');
        assert.ok(bad >= 1, 'the host saw a breach');
        assert.ok(ticks > 0, 'the host’s event loop turned');
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(servers(), before, 'no server of the script’s lives in the host');
      } finally {
        clearInterval(timer);
        iso.kill();
        await iso.ended;
      }
    });
  }

  // Node kept a line without end in one string, without bound (and threw, uncaught, past V8's longest string).
  it('a line without end: past the frame cap the process is ended as a breach, and the host keeps no more of it', async () => {
    const entry = path.join(dir, 'line.js');
    fs.writeFileSync(
      entry,
      `process.on('message', () => {});
      const fs = require('node:fs');
      const chunk = Buffer.alloc(1024 * 1024, 0x78);
      const nap = new Int32Array(new SharedArrayBuffer(4));
      let wrote = 0;
      let why = 'all written';
      while (wrote < 64 * chunk.length) {
        try { wrote += fs.writeSync(process.channel.fd, chunk); } catch (e) { if (e.code !== 'EAGAIN') { why = e.code; break; } Atomics.wait(nap, 0, 0, 2); }
      }
      process.stderr.write('wrote ' + wrote + ' (' + why + ')');
      setInterval(() => {}, 1000);`,
    );
    const heap = process.memoryUsage().heapUsed;
    const proc = startProcess(entry, permissionFlags([entry]), confinement);
    let bad = 0;
    let messages = 0;
    proc.on('message', () => messages++);
    assert.ok(
      guardChannel(proc, () => bad++, 4 * 1024 * 1024),
      'the guard found this Node’s channel',
    );
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    let exit = 'running';
    const gone = new Promise((r) => proc.once('exit', (code, signal) => r((exit = `exit ${code} ${signal}`))));
    try {
      const deadline = Date.now() + 30_000;
      while (bad === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(bad, 1, `the line past the cap was a breach (the attack: ${exit}; ${stderr.slice(-500)})`);
      assert.equal(messages, 0);
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(process.memoryUsage().heapUsed - heap < 24 * 1024 * 1024, 'the host kept no more of the line');
    } finally {
      proc.kill('SIGKILL');
      await gone;
    }
  });

  it('the control: a well-formed message still arrives', async () => {
    const entry = path.join(dir, 'ok.js');
    fs.writeFileSync(
      entry,
      `process.on('message', () => {}); process.send({ op: 'ready' }); process.send({ op: 'log', message: 'x'.repeat(3 * 1024 * 1024) }, () => process.exit(0));`,
    );
    const heard: FromChild[] = [];
    let bad = 0;
    const iso = new Isolate({ onMessage: (m) => heard.push(m), onBadMessage: () => bad++ }, DEFAULT_ISOLATE, true, confinement, entry);
    await iso.ended;
    assert.equal(bad, 0);
    assert.equal(heard.length, 1);
    assert.equal(heard[0].op === 'log' && heard[0].message.length, 3 * 1024 * 1024);
  });
});

// The other side of the cap: a script that has not escaped never meets it. The script process
// cuts what the host keeps little of (a log, a phase, an error) and refuses a request or a
// result past what one message carries, so each still ends as it did before the cap.
describe('workflow channel: a script’s own largest messages stay under the frame cap', function () {
  this.timeout(120_000);
  const x = workflowWorld({ workflow: { isolate: { heapMb: 512, rssMb: 2048 } } });
  // '€' is 3 bytes of UTF-8: 22 Mi of them are a 66 MiB message.
  const BIG = '"€".repeat(22 * 1024 * 1024)';

  it('a result past it is RESULT_TOO_LARGE, not a protocol breach', async () => {
    const o = await x.run(`return ${BIG};`);
    assert.equal(o.code, 'RESULT_TOO_LARGE', o.error);
  });

  it('a log, a phase and an error past it are cut, and the run ends as the script said', async () => {
    const o = await x.run(`const s = ${BIG}; log(s); phase(s); throw new Error(s);`);
    assert.equal(o.code, 'SCRIPT_ERROR', o.error);
    assert.equal(dataOf(x.events('workflow/log')[0]).truncated, true);
    assert.equal(x.events('workflow/phase').length, 1);
  });

  it('an agent() request past it is BAD_AGENT_REQUEST, and no child is made', async () => {
    const o = await x.run(`return await agent(${BIG});`);
    assert.equal(o.code, 'BAD_AGENT_REQUEST', o.error);
    assert.match(o.error!, /over \d+ characters/);
    assert.equal(x.w.t.h.store.children(x.root.id).length, 0);
  });
});
