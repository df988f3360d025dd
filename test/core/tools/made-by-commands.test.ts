// Decision 0111: the protected folders a confined command makes below a root's top are recorded,
// with the real bubblewrap and real files. The walk before each command and the one after it see
// them appear; the record (a file outside the workspace) names them by device, inode and birth.
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { programReadNames } from '../../../src/core/remote/program-reads';
import type { RemoteSettings } from '../../../src/core/remote/settings';
import { ARBOR_READS, describeMade, identityOf, MadeRecord } from '../../../src/core/tools/made-by-commands';
import { protectedNameReason } from '../../../src/core/tools/protected-names';
import { createRunCommandTool } from '../../../src/core/tools/run-command';
import { CommandSandbox } from '../../../src/core/tools/sandbox/command-sandbox';
import { sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import { call, makeWorkspace, type Workspace, waitUntil } from './fixture';

describe('OS sandbox: protected folders a command makes are recorded (decision 0111)', () => {
  let ws: Workspace;
  let record: MadeRecord;
  let run: (command: string) => Promise<string>;

  before(async () => {
    const status = await sandboxStatus();
    if (!status.available) throw new Error(`These tests need bubblewrap, and ${status.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
  });
  beforeEach(() => {
    ws = makeWorkspace();
    record = new MadeRecord(path.join(ws.outside, 'made-by-commands.jsonl'));
    const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ made: record }) });
    run = async (command) => {
      const r = await call(tool, { command: `${command}; echo done` }, ws.ctx());
      assert.match(r.content, /done/, `the command ran: ${r.content}`);
      return r.content;
    };
  });
  afterEach(() => ws.cleanup());

  const madeNames = (folder: string) => record.madeIn(ws.at(folder)).map((m) => path.relative(ws.root, m.path));

  it("the last command's .arbor, .claude and symlinked .arbor are recorded after it ends; the user's own are not", async () => {
    ws.write('mine/.arbor/settings.json', '{}\n');
    await run('mkdir -p sub/.arbor deep/x/.claude && echo "{}" > sub/.arbor/settings.json && mkdir l && ln -s ../mine/.arbor l/.arbor');
    // Recorded by the walk after the command, on the next turn of the event loop: no command follows.
    assert.ok(await waitUntil(() => madeNames('l').length > 0, 5000), 'the walk after the command recorded them');
    assert.deepEqual(madeNames('sub'), ['sub/.arbor']);
    assert.deepEqual(madeNames('deep/x'), ['deep/x/.claude']);
    assert.deepEqual(madeNames('l'), ['l/.arbor'], 'the link itself is what the command made');
    assert.deepEqual(madeNames('mine'), [], 'a folder there before the first walk is the user’s');
    assert.deepEqual(madeNames('.'), [], 'the top has stand-ins, never recorded');
  });

  it('a repository a command makes is recorded for every folder git finds it from; trust and a folder made again clear it', async () => {
    await run('true');
    await run('git init -q repo && mkdir -p repo/a/b');
    assert.ok(await waitUntil(() => madeNames('repo/a/b').length > 0, 5000));
    assert.deepEqual(madeNames('repo/a/b'), ['repo/.git']);
    assert.deepEqual(madeNames('repo'), ['repo/.git']);

    await run('mkdir -p other/.vscode');
    assert.ok(await waitUntil(() => madeNames('other').length > 0, 5000));
    assert.deepEqual(
      record.trust(ws.at('repo')).map((m) => m.path),
      [ws.at('repo/.git')],
    );
    assert.deepEqual(madeNames('repo/a/b'), [], 'trusted by the user');
    assert.deepEqual(madeNames('other'), ['other/.vscode'], 'another folder is not trusted with it');

    // Deleted and made again by the user: a new inode, not what the command made.
    fs.rmSync(ws.at('other/.vscode'), { recursive: true });
    fs.mkdirSync(ws.at('other/.vscode'));
    assert.deepEqual(madeNames('other'), []);
    execFileSync('git', ['status'], { cwd: ws.at('repo') });
  });

  it("only what Arbor itself reads decides (amended in s56): another agent's folder a command made is recorded, not refused; a .mcp.json it made is refused", async () => {
    await run('true');
    await run('mkdir -p sub/.gemini sub/.opencode sub/.codex other && echo "{}" > sub/.gemini/settings.json && echo "{}" > other/.mcp.json');
    const lines = () => (fs.existsSync(record.file) ? fs.readFileSync(record.file, 'utf8') : '');
    const recorded = ['sub/.gemini', 'sub/.opencode', 'sub/.codex', 'other/.mcp.json'];
    assert.ok(await waitUntil(() => recorded.every((n) => lines().includes(ws.at(n))), 5000), `the walk after the command recorded them all: ${lines()}`);
    assert.deepEqual(madeNames('sub'), [], 'Arbor reads none of them: the folder is not refused for them');
    // Each decides while a program that reads it is configured (it starts in that folder).
    const withPrograms = (remote: RemoteSettings) => record.madeIn(ws.at('sub'), programReadNames(remote)).map((m) => path.relative(ws.root, m.path));
    assert.deepEqual(withPrograms({ codex: { command: 'codex' } }), ['sub/.codex']);
    assert.deepEqual(withPrograms({ acp: [{ name: 'o', command: '/usr/local/bin/opencode' }] }), ['sub/.opencode']);
    assert.deepEqual(
      withPrograms({
        acp: [
          { name: 'g', command: 'gemini.cmd' },
          { name: 'k', command: 'kiro', protects: ['.opencode'] },
        ],
      }),
      ['sub/.gemini', 'sub/.opencode'],
    );
    assert.deepEqual(withPrograms({ claudeCode: { command: 'claude' }, dshSdk: { command: 'arbor' } }), [], 'they read what Arbor reads');
    assert.deepEqual(madeNames('other'), ['other/.mcp.json'], "Arbor starts the servers a folder's .mcp.json names: refused");
    // Every name of the table is one the walk records (a protected name), so none of its rows is dead.
    for (const name of Object.keys(ARBOR_READS)) assert.ok(protectedNameReason(name), `${name} is a protected name`);
  });

  it("a folder Arbor made itself and trusted stays trusted when a walk later records it (the CLI's store beside a session)", () => {
    fs.mkdirSync(ws.at('cli/.arbor'), { recursive: true });
    record.trustOwn(ws.at('cli/.arbor'));
    record.record([{ path: ws.at('cli/.arbor') }]);
    assert.deepEqual(madeNames('cli'), []);
    fs.writeFileSync(record.file, 'cut{"id"\n', { flag: 'a' });
    fs.mkdirSync(ws.at('x/.claude'), { recursive: true });
    record.record([{ path: ws.at('x/.claude') }]);
    assert.deepEqual(madeNames('x'), ['x/.claude'], 'a line cut by a crash does not hide the others');
  });

  it('a second command cannot remove or replace what the first made: it is protected from then on, and stays recorded', async () => {
    await run('mkdir -p sub/.arbor && echo "{}" > sub/.arbor/settings.json');
    const out = await run('rm -rf sub/.arbor; mv sub gone; echo \'{"hooks":{}}\' > sub/.arbor/settings.json');
    assert.match(out, /Read-only file system|Device or resource busy|Permission denied/);
    assert.equal(ws.read('sub/.arbor/settings.json'), '{}\n');
    assert.ok(await waitUntil(() => madeNames('sub').length > 0, 5000));
    assert.deepEqual(madeNames('sub'), ['sub/.arbor']);
  });

  it("attack: folders past the walk's bound hide nothing: a .arbor made where the walk stopped short is refused, after the bound too (decision 0123)", async () => {
    // A walk stops at its bound (10,000 folders; 40 here), and what appeared where it did not reach
    // was never recorded: 60 folders first, then `.arbor` one level below where the walk stops.
    const small = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ made: record, walk: { maxDirs: 40, maxDepth: 24 } }) });
    const go = async (command: string) => {
      const r = await call(small, { command: `${command}; echo done` }, ws.ctx());
      assert.match(r.content, /done/, r.content);
      return r.content;
    };
    ws.write('mine/x/y/.arbor/settings.json', '{}\n');
    await go('true');
    await go('mkdir -p $(seq -f a/d%g 60) b/c/d/.arbor && echo \'{"hooks":1}\' > b/c/d/.arbor/settings.json');
    assert.match(await go('true'), /only the first 40 folders were searched/, 'the walk hit its bound');
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(madeNames('b/c/d'), ['b/c/d/.arbor'], 'made where the walk stopped short: refused');
    assert.deepEqual(madeNames('mine/x/y'), [], 'the user’s own, there before the walk stopped short, is not');
    // The folders that used the bound up removed: a whole walk again, and the folder stays refused.
    await go('rm -rf a');
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(madeNames('b/c/d'), ['b/c/d/.arbor']);
    record.trust(ws.at('b/c/d'));
    assert.deepEqual(madeNames('b/c/d'), [], 'trusted by the user: no longer refused');
  });

  it("a user's workspace over the walk's bound: one unsearched line for 20 commands; the user's own new .vscode is refused with why and what to do (decision 0123)", async () => {
    // The user's big tree (a Rust target/, a monorepo) is over the bound before Arbor ever runs.
    for (let i = 0; i < 60; i++) fs.mkdirSync(ws.at(`big/d${i}`), { recursive: true });
    const small = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ made: record, walk: { maxDirs: 40, maxDepth: 24 } }) });
    for (let i = 0; i < 20; i++) {
      const r = await call(small, { command: `echo ${i} >> log.txt; echo done` }, ws.ctx());
      assert.match(r.content, /done/, r.content);
    }
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(fs.readFileSync(record.file, 'utf8').match(/"unsearched"/g)?.length, 1, 'one line for the whole stretch of walks, not one per command');
    // The user (no command) makes a folder of their own with VS Code settings in it.
    fs.mkdirSync(ws.at('app/.vscode'), { recursive: true });
    const made = record.madeIn(ws.at('app'));
    assert.deepEqual(
      made.map((m) => path.relative(ws.root, m.path)),
      ['app/.vscode'],
      'born where no walk could tell who made it: refused until trusted',
    );
    const said = describeMade(ws.at('app'), made);
    assert.match(said, new RegExp(`the walk of ${ws.root} stopped at its bound`), said);
    assert.match(said, /not that a command was seen making it/, said);
    assert.doesNotMatch(said, /make it again yourself/, 'made again, it is born after the walk stopped short too: advice that cannot work');
    assert.doesNotMatch(said, /\(seen /, 'no walk saw it');
    assert.match(said, new RegExp(`arbor trust ${ws.at('app')}`), said);
    record.trust(ws.at('app'));
    assert.deepEqual(record.madeIn(ws.at('app')), []);
  });

  it("two workspaces' sandboxes in one process: each records only its own workspace's folders; one without a record takes none of theirs", async () => {
    const other = makeWorkspace();
    const third = makeWorkspace();
    try {
      const otherRecord = new MadeRecord(path.join(other.outside, 'made-by-commands.jsonl'));
      const runIn = (w: Workspace, made?: MadeRecord) => {
        const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox(made ? { made } : {}) });
        return async (command: string) => {
          const r = await call(tool, { command: `${command}; echo done` }, w.ctx());
          assert.match(r.content, /done/, r.content);
        };
      };
      const [inA, inB, inC] = [run, runIn(other, otherRecord), runIn(third)];
      await Promise.all([inA('true'), inB('true'), inC('true')]);
      // Made between two walks by something else than a command (recorded too, decision 0111), so
      // the walks before the next commands, which run side by side, are the ones that see them.
      fs.mkdirSync(ws.at('a/.arbor'), { recursive: true });
      fs.mkdirSync(other.at('b/.claude'), { recursive: true });
      fs.mkdirSync(third.at('c/.vscode'), { recursive: true });
      await Promise.all([inA('mkdir -p a2/.arbor'), inB('mkdir -p b2/.claude'), inC('true'), inC('true')]);
      const names = (r: MadeRecord, w: Workspace, folders: string[]) => folders.flatMap((f) => r.madeIn(w.at(f)).map((m) => path.relative(w.root, m.path)));
      assert.ok(await waitUntil(() => names(record, ws, ['a2']).length > 0 && names(otherRecord, other, ['b2']).length > 0, 5000));
      assert.deepEqual(names(record, ws, ['a', 'a2']), ['a/.arbor', 'a2/.arbor']);
      assert.deepEqual(names(otherRecord, other, ['b', 'b2']), ['b/.claude', 'b2/.claude']);
      const lines = (r: MadeRecord) => fs.readFileSync(r.file, 'utf8');
      assert.ok(!lines(record).includes(other.root) && !lines(record).includes(third.root), lines(record));
      assert.ok(!lines(otherRecord).includes(ws.root) && !lines(otherRecord).includes(third.root), lines(otherRecord));
    } finally {
      other.cleanup();
      third.cleanup();
    }
  });
});

describe('the record of what commands made stays small (decision 0111, amended in s55)', () => {
  let ws: Workspace;
  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => ws.cleanup());

  const made = (record: MadeRecord, folder: string) => record.madeIn(ws.at(folder)).map((m) => path.relative(ws.root, m.path));
  const mk = (rel: string) => {
    fs.mkdirSync(ws.at(rel), { recursive: true });
    return { path: ws.at(rel) };
  };

  it('a compaction keeps a made folder that exists refused and a trusted one trusted, and drops a deleted folder and repeats', () => {
    const record = new MadeRecord(path.join(ws.outside, 'made.jsonl'), { compactAt: 4096 });
    record.record([mk('keep/.arbor')]);
    record.record([mk('gone/.claude')]);
    fs.mkdirSync(ws.at('mine/.arbor'), { recursive: true });
    record.trustOwn(ws.at('mine/.arbor'));
    // Seen again and again (several processes' walks): the repeats pile up until the record is past its bound.
    for (let i = 0; i < 10; i++) record.record([{ path: ws.at('keep/.arbor') }, { path: ws.at('mine/.arbor') }]);
    fs.rmSync(ws.at('gone'), { recursive: true });
    const before = fs.statSync(record.file).size;
    assert.ok(before < 4096, 'not past the bound yet');
    assert.equal(record.compact(), true);
    const lines = fs.readFileSync(record.file, 'utf8').trim().split('\n');
    assert.equal(lines.length, 3, `a header and one line per identity still there: ${lines.join('\n')}`);
    assert.ok(!lines.some((l) => l.includes('gone/.claude')), 'the deleted folder’s line is gone');
    assert.deepEqual(made(record, 'keep'), ['keep/.arbor'], 'still refused');
    assert.deepEqual(made(record, 'mine'), [], 'still trusted, though walks saw it appear after its trust');
    // Made again by someone at the same place: a new identity, not on the record.
    fs.mkdirSync(ws.at('gone/.claude'), { recursive: true });
    assert.deepEqual(made(record, 'gone'), []);

    // Past the bound, an append compacts by itself, and not again until the record doubled.
    for (let i = 0; i < 40; i++) record.record([{ path: ws.at('keep/.arbor') }]);
    const after = fs.readFileSync(record.file, 'utf8');
    assert.ok(Buffer.byteLength(after) < 4096, `compacted on append: ${Buffer.byteLength(after)} bytes`);
    assert.deepEqual(made(record, 'keep'), ['keep/.arbor']);
  });

  it('a root whose walk stopped short stays so through compactions (its earliest line), for what was born since (decision 0123)', () => {
    const record = new MadeRecord(path.join(ws.outside, 'made.jsonl'), { compactAt: 4096 });
    mk('old/x/.claude');
    const since = Date.now() + 20;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 40); // born well after `since`
    mk('new/x/.claude');
    fs.mkdirSync(ws.at('.arbor'));
    record.recordUnsearched(ws.root, since);
    record.recordUnsearched(ws.root, since + 1000);
    for (let round = 0; round < 2; round++) {
      assert.deepEqual(made(record, 'new/x'), ['new/x/.claude'], `born since: refused (round ${round})`);
      assert.deepEqual(made(record, 'old/x'), [], 'born before: not');
      assert.deepEqual(made(record, '.'), [], 'the top’s own names: stand-ins, no command makes them');
      assert.equal(record.compact(), true);
    }
    assert.equal(fs.readFileSync(record.file, 'utf8').match(/"unsearched"/g)?.length, 1, 'one line per root, the earliest');
    fs.rmSync(ws.root, { recursive: true });
    assert.equal(record.compact(), true);
    assert.doesNotMatch(fs.readFileSync(record.file, 'utf8'), /"unsearched"/, 'a root gone takes its line along');
  });

  it('attack: a made folder moved by a command stays refused through compactions (kept at the path where it is now)', () => {
    const record = new MadeRecord(path.join(ws.outside, 'made.jsonl'), { compactAt: 4096 });
    record.record([mk('x/.arbor')]);
    fs.renameSync(ws.at('x'), ws.at('y')); // the command's `mv x y`; the next walk sees it appear at y
    record.record([{ path: ws.at('y/.arbor') }]);
    assert.deepEqual(made(record, 'y'), ['y/.arbor']);
    for (let round = 0; round < 3; round++) {
      assert.equal(record.compact(), true);
      assert.deepEqual(made(record, 'y'), ['y/.arbor'], `still refused after compaction ${round + 1}`);
    }
  });

  it('a read during a compaction waits for its carry-over: an appearance appended meanwhile is not missed', async () => {
    const record = new MadeRecord(path.join(ws.outside, 'made.jsonl'), { compactAt: 4096 });
    record.record([mk('early/.arbor')]);
    const late = mk('late/.claude');
    const line = `${JSON.stringify({ id: identityOf(late.path), path: late.path, at: new Date().toISOString() })}\n`;
    // Another process mid-compaction: its rewrite is in place and holds the lock (its own pid in
    // it), and what was appended to the old file meanwhile is carried over 300 ms later.
    const { spawn } = await import('node:child_process');
    const holder = spawn('/bin/sh', ['-c', 'sleep 0.3; printf %s "$1" >> "$2"; rm -f "$3"', 'sh', line, record.file, `${record.file}.lock`], {
      stdio: 'ignore',
    });
    const ended = new Promise((resolve) => holder.on('exit', resolve));
    fs.writeFileSync(`${record.file}.lock`, String(holder.pid));
    try {
      assert.deepEqual(made(record, 'late'), ['late/.claude'], 'read after the carry-over, not before it');
      assert.deepEqual(made(record, 'early'), ['early/.arbor']);
    } finally {
      await ended;
    }
  });

  it('attack: a compaction on a full disk (its rewrite written short) loses no line: the record stays as it was', () => {
    const file = path.join(ws.outside, 'made.jsonl');
    const folders = Array.from({ length: 60 }, (_, i) => mk(`made-${i}/.claude`));
    new MadeRecord(file).record(folders);
    const module = require.resolve('../../../src/core/tools/made-by-commands');
    // The disk fills as the rewrite is written: a write past what is left returns short, without
    // an error (a file-size limit of 4 KiB gives the same short write, for any user).
    const compactor = `process.exitCode = require(${JSON.stringify(module)}).MadeRecord.prototype.compact.call(new (require(${JSON.stringify(module)}).MadeRecord)(${JSON.stringify(file)})) ? 0 : 4`;
    const out = spawnSync('/bin/bash', ['-c', 'trap "" XFSZ; ulimit -f 4; exec "$0" -e "$1"', process.execPath, compactor], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.ok(out.status === 0 || out.status === 4, `the compaction ran (${out.status} ${out.signal} ${out.stderr})`);
    const record = new MadeRecord(file);
    const lost = folders.filter((_, i) => made(record, `made-${i}`).length !== 1).map((f) => path.relative(ws.root, f.path));
    assert.deepEqual(lost, [], 'every made folder is still refused');
  });

  it('attack: an append a full disk cut short does not swallow the next appearance recorded', () => {
    const file = path.join(ws.outside, 'made.jsonl');
    const first = mk('first/.claude');
    new MadeRecord(file).record([first]);
    // Padded to 100 bytes short of 4 KiB with a line for a folder that is not there (it counts for nothing).
    const pad = (n: number) => `${JSON.stringify({ id: 'none', path: ws.at('none'), at: 'x'.repeat(n) })}\n`;
    const room = 4096 - 100 - fs.statSync(file).size;
    fs.appendFileSync(file, pad(room - Buffer.byteLength(pad(0))));
    assert.equal(fs.statSync(file).size, 4096 - 100);
    const cut = mk('cut/.claude');
    const module = require.resolve('../../../src/core/tools/made-by-commands');
    const appender = `new (require(${JSON.stringify(module)}).MadeRecord)(${JSON.stringify(file)}).record([{ path: ${JSON.stringify(cut.path)} }])`;
    const out = spawnSync('/bin/bash', ['-c', 'trap "" XFSZ; ulimit -f 4; exec "$0" -e "$1"', process.execPath, appender], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.ok(
      fs.statSync(file).size === 4096 && out.status !== 0,
      `the disk filled in the middle of its line, and the append said so (${out.status} ${out.stderr})`,
    );
    // Space again: the next walk's appearance is recorded, and refused.
    const next = mk('next/.claude');
    const record = new MadeRecord(file);
    record.record([next]);
    assert.deepEqual(made(record, 'next'), ['next/.claude'], 'the next appearance is refused');
    assert.deepEqual(made(record, 'first'), ['first/.claude']);
  });

  for (const at of ['after it renamed its rewrite over the record', 'after it gave the old record its second name'] as const)
    it(`attack: a compaction killed (-9) ${at} loses no appearance appended to the old record meanwhile`, () => {
      const file = path.join(ws.outside, 'made.jsonl');
      new MadeRecord(file).record([mk('early/.arbor')]);
      const late = mk('late/.claude');
      const line = `${JSON.stringify({ id: identityOf(late.path), path: late.path, at: new Date().toISOString() })}\n`;
      const module = require.resolve('../../../src/core/tools/made-by-commands');
      // The compacting process, killed at the worst moment: another process's append reached the
      // old record after the compaction read it (and that appender saw no rename, so it is done).
      const compactor = `
        const fs = require('fs');
        const { MadeRecord } = require(${JSON.stringify(module)});
        const rename = fs.renameSync, link = fs.linkSync;
        const killAfterRename = ${JSON.stringify(at.startsWith('after it renamed'))};
        fs.linkSync = (from, to) => {
          fs.appendFileSync(${JSON.stringify(file)}, ${JSON.stringify(line)});
          link(from, to);
          if (!killAfterRename) process.kill(process.pid, 'SIGKILL');
        };
        fs.renameSync = (from, to) => {
          rename(from, to);
          if (to === ${JSON.stringify(file)}) process.kill(process.pid, 'SIGKILL');
        };
        new MadeRecord(${JSON.stringify(file)}).compact();
        process.exit(3);`;
      const out = spawnSync(process.execPath, ['-e', compactor], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(out.signal, 'SIGKILL', `killed mid-compaction (${out.status} ${out.stderr})`);
      assert.ok(fs.existsSync(`${file}.lock`), 'its lock left behind, as a kill leaves it');
      const record = new MadeRecord(file);
      assert.deepEqual(made(record, 'late'), ['late/.claude'], 'the appearance appended meanwhile is still refused');
      assert.deepEqual(made(record, 'early'), ['early/.arbor']);
      assert.ok(!fs.existsSync(`${file}.prev`), 'the old record was carried over and removed');
      assert.ok(!fs.existsSync(`${file}.lock`), 'the leftover lock was taken over and released');
      // The next compaction keeps one line per identity.
      assert.equal(record.compact(), true);
      const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
      assert.equal(lines.length, 3, lines.join('\n'));
      assert.deepEqual(made(record, 'late'), ['late/.claude']);
    });

  it("a compaction's lock left by a killed process whose pid is the reader's own (a fresh PID namespace) does not hold the read", async () => {
    const status = await sandboxStatus();
    if (!status.available) throw new Error(`This test needs bubblewrap, and ${status.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
    const file = path.join(ws.outside, 'made.jsonl');
    new MadeRecord(file).record([mk('a/.arbor')]);
    const lockModule = require.resolve('../../../src/core/store/file-lock');
    const module = require.resolve('../../../src/core/tools/made-by-commands');
    const fresh = (script: string) => ['--unshare-pid', '--dev-bind', '/', '/', '--proc', '/proc', '--die-with-parent', process.execPath, '-e', script];
    // A compaction (pid 2 in its sandbox) killed while it holds the lock.
    const { spawn } = await import('node:child_process');
    const holder = spawn(
      'bwrap',
      fresh(
        `require(${JSON.stringify(lockModule)}).withFileLock(${JSON.stringify(`${file}.lock`)}, () => { process.stdout.write('held'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); });`,
      ),
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise((resolve) => holder.stdout.once('data', resolve));
    const gone = new Promise((resolve) => holder.once('exit', resolve));
    holder.kill('SIGKILL');
    await gone;
    const reader = `
      const { MadeRecord } = require(${JSON.stringify(module)});
      const started = Date.now();
      const got = new MadeRecord(${JSON.stringify(file)}).madeIn(${JSON.stringify(ws.at('a'))});
      process.stdout.write(JSON.stringify({ pid: process.pid, ms: Date.now() - started, got: got.map((m) => m.path) }));`;
    const out = spawnSync('bwrap', fresh(reader), { encoding: 'utf8', timeout: 30_000 });
    assert.equal(out.status, 0, out.stderr);
    const r = JSON.parse(out.stdout) as { pid: number; ms: number; got: string[] };
    assert.deepEqual(r.got, [path.join(fs.realpathSync(ws.root), 'a', '.arbor')]);
    assert.ok(r.ms < 1000, `read in ${r.ms} ms as pid ${r.pid} (it waited its 2 s before)`);
    assert.ok(!fs.existsSync(`${file}.lock`), 'the leftover was taken over and released');
  });

  it('attack: a lock the reader cannot read (a folder, another user’s file) delays a read by its wait at most, never hangs it', () => {
    const file = path.join(ws.outside, 'made.jsonl');
    new MadeRecord(file).record([mk('a/.arbor')]);
    // What `sudo arbor` killed mid-compaction leaves (root's 0600 file), or anything in its place.
    fs.mkdirSync(`${file}.lock`);
    const module = require.resolve('../../../src/core/tools/made-by-commands');
    const reader = `
      const { MadeRecord } = require(${JSON.stringify(module)});
      const got = new MadeRecord(${JSON.stringify(file)}).madeIn(${JSON.stringify(path.join(ws.root, 'a'))});
      process.stdout.write(JSON.stringify(got.map((m) => m.path)));`;
    const started = Date.now();
    const out = spawnSync(process.execPath, ['-e', reader], { timeout: 15_000, encoding: 'utf8' });
    assert.equal(out.signal, null, `the read hung (killed after ${Date.now() - started} ms)`);
    assert.deepEqual(JSON.parse(out.stdout), [path.join(fs.realpathSync(ws.root), 'a', '.arbor')], 'read as it is, the made folder still refused');
    assert.ok(Date.now() - started < 10_000, 'within the read’s wait, not past it');
  });

  it('processes appending while others compact lose no line', async () => {
    const file = path.join(ws.outside, 'made.jsonl');
    const module = require.resolve('../../../src/core/tools/made-by-commands');
    const writer = (name: string) => `
      const fs = require('fs'), path = require('path');
      const { MadeRecord } = require(${JSON.stringify(module)});
      const record = new MadeRecord(${JSON.stringify(file)}, { compactAt: 2048 });
      for (let i = 0; i < 150; i++) {
        const p = path.join(${JSON.stringify(ws.root)}, '${name}' + i, '.arbor');
        fs.mkdirSync(p, { recursive: true });
        record.record([{ path: p }]);
      }`;
    const { spawn } = await import('node:child_process');
    const exits = ['a', 'b', 'c'].map(
      (name) =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, ['-e', writer(name)], { stdio: 'inherit' });
          child.on('exit', resolve);
        }),
    );
    assert.deepEqual(await Promise.all(exits), [0, 0, 0]);
    const record = new MadeRecord(file);
    const missing = ['a', 'b', 'c'].flatMap((n) => Array.from({ length: 150 }, (_, i) => `${n}${i}`)).filter((f) => made(record, f).length !== 1);
    assert.deepEqual(missing, []);
    assert.match(fs.readFileSync(file, 'utf8').split('\n')[0], /"compacted"/, 'compactions ran');
  });

  it('a read beside appending and compacting processes has every appearance recorded before it began (most take no lock)', async () => {
    const file = path.join(ws.outside, 'made.jsonl');
    const module = require.resolve('../../../src/core/tools/made-by-commands');
    // Each writer says, once `record` returned, which folder it recorded (in a file of its own).
    const writer = (name: string) => `
      const fs = require('fs'), path = require('path');
      const { MadeRecord } = require(${JSON.stringify(module)});
      const record = new MadeRecord(${JSON.stringify(file)}, { compactAt: 2048 });
      while (!fs.existsSync(${JSON.stringify(`${file}.go`)})) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      for (let i = 0; i < 200; i++) {
        const p = path.join(${JSON.stringify(ws.root)}, '${name}' + i, '.arbor');
        fs.mkdirSync(p, { recursive: true });
        record.record([{ path: p }]);
        fs.appendFileSync(${JSON.stringify(path.join(ws.outside, 'done-'))} + '${name}', p + '\\n');
      }`;
    // A read between a compaction's rename and its carry-over misses lines appended (and returned)
    // meanwhile: every folder said recorded before the read began must be in it. (The record's read, as madeIn makes it.)
    const reader = `
      const fs = require('fs');
      const { MadeRecord, identityOf } = require(${JSON.stringify(module)});
      const record = new MadeRecord(${JSON.stringify(file)});
      const lock = ${JSON.stringify(`${file}.lock`)};
      const open = fs.openSync;
      let reads = 0, locked = 0, last = 0;
      fs.openSync = (p, flags, ...rest) => { if (p === lock && flags === 'wx') locked++; return open(p, flags, ...rest); };
      fs.writeFileSync(${JSON.stringify(`${file}.go`)}, '');
      const said = () => ['a', 'b'].flatMap((n) => { try { return fs.readFileSync(${JSON.stringify(path.join(ws.outside, 'done-'))} + n, 'utf8').split('\\n').filter(Boolean); } catch { return []; } });
      for (const until = Date.now() + 60000; Date.now() < until && last < 400; reads++) {
        const done = said().map(identityOf);
        const ids = new Set(record.read().map((l) => l.id));
        const missing = done.filter((id) => !ids.has(id));
        if (missing.length) { process.stdout.write(JSON.stringify({ missing, reads })); process.exit(1); }
        last = done.length;
      }
      process.stdout.write(JSON.stringify({ reads, locked, last }));`;
    const { spawn } = await import('node:child_process');
    const run = (script: string) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('exit', (code) => resolve({ code, out }));
      });
    const [r, ...w] = await Promise.all([run(reader), run(writer('a')), run(writer('b'))]);
    assert.deepEqual(
      w.map((x) => x.code),
      [0, 0],
    );
    assert.equal(r.code, 0, `a read missed appearances recorded before it began: ${r.out}`);
    const said = JSON.parse(r.out) as { reads: number; locked: number; last: number };
    assert.equal(said.last, 400, 'the reader read until every folder was recorded');
    // (Before, every read took the lock: a file made and removed in the user's folder, and a wait behind any holder.)
    assert.ok(said.locked < said.reads, `reads with no compaction under way took no lock (${said.locked} tries at the lock in ${said.reads} reads)`);
    assert.match(fs.readFileSync(file, 'utf8').split('\n')[0], /"compacted"/, 'compactions ran');
  });
});
