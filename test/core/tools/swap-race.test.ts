import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createEditFileTool } from '../../../src/core/tools/edit-file';
import { createReadFileTool } from '../../../src/core/tools/read-file';
import { createWriteFileTool } from '../../../src/core/tools/write-file';
import { call, makeWorkspace, snapshot, type Workspace } from './fixture';

// Decision 0097, as an attacker tries it: while a program in the workspace (what a confined
// run_command can run) swaps a real folder for a symlink to outside the workspace — or to
// `.git` — again and again, the file tools are called on a path through that folder. Each
// call is checked (the folder is real then) and then acts; the swap lands between the two
// often enough that the tools wrote outside the workspace and into `.git/config` before their
// folders were pinned (beneath.ts). Nothing may land anywhere but the real folder.

/**
 * Swaps `<root>/<real>` with the symlink `<root>/<link>` until `ms` pass: with one atomic
 * renameat2(RENAME_EXCHANGE) through python3's ctypes where it runs (what a compiled program in
 * the sandbox does), else with renames a moment apart (Node has no exchange), putting the real
 * folder back wherever a tool made a new one meanwhile.
 */
const EXCHANGE = `
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, ms = sys.argv[1].encode(), sys.argv[2].encode(), int(sys.argv[3])
end = time.time() + ms / 1000
n = 0
while time.time() < end:
    if libc.renameat2(-100, a, -100, b, 2) == 0:
        n += 1
print(n)
`;
const RENAMES = `
const fs = require('fs');
const [a, b, ms] = process.argv.slice(1);
const hold = a + '.held';
const end = Date.now() + Number(ms);
let n = 0;
while (Date.now() < end) {
  try { fs.renameSync(a, hold); fs.renameSync(b, a); fs.renameSync(a, b); n++; } catch {}
  try { fs.renameSync(hold, a); } catch { try { fs.rmSync(a, { recursive: true, force: true }); fs.renameSync(hold, a); } catch {} }
}
process.stdout.write(String(n));
`;
const exchangeRuns = spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], { stdio: 'ignore' }).status === 0;

function swapper(ws: Workspace, real: string, link: string, ms: number): { swaps: Promise<number> } {
  const [a, b] = [ws.at(real), ws.at(link)];
  const proc = exchangeRuns
    ? spawn('python3', ['-c', EXCHANGE, a, b, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, ['-e', RENAMES, a, b, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout?.on('data', (d) => (out += d));
  return { swaps: new Promise<number>((resolve) => proc.on('close', () => resolve(Number(out) || 0))) };
}

describe('file tools against a folder swapped for a symlink while they act (decision 0097)', function () {
  this.timeout(120_000);
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  const RACE_MS = 4000;

  it('write_file never writes through the swapped folder: nothing lands outside, every call either wrote the real folder or was refused', async () => {
    fs.mkdirSync(ws.at('sub'));
    fs.symlinkSync(ws.outside, ws.at('alt'));
    const before = snapshot(ws.outside);
    const tool = createWriteFileTool();
    const s = swapper(ws, 'sub', 'alt', RACE_MS);
    const codes: Record<string, number> = {};
    const end = Date.now() + RACE_MS - 200;
    for (let i = 0; Date.now() < end; i++) {
      const r = await call(tool, { path: 'sub/pwn.txt', content: `written ${i}` }, ws.ctx());
      codes[r.code ?? 'ok'] = (codes[r.code ?? 'ok'] ?? 0) + 1;
    }
    const swaps = await s.swaps;
    assert.ok(swaps > 10, `the swapper ran (${swaps} swaps, ${exchangeRuns ? 'atomic exchanges' : 'renames'})`);
    assert.ok((codes.ok ?? 0) > 0, `some writes went through: ${JSON.stringify(codes)}`);
    assert.deepEqual(snapshot(ws.outside), before, `nothing appeared outside the workspace (calls: ${JSON.stringify(codes)})`);
    assert.deepEqual(
      Object.keys(codes).filter((c) => c !== 'ok' && c !== 'OUTSIDE_WORKSPACE' && c !== 'INVALID_PATH' && c !== 'IO_ERROR'),
      [],
      `refusals say what happened: ${JSON.stringify(codes)}`,
    );
  });

  it('edit_file never reads or rewrites a file outside through the swapped folder', async () => {
    fs.mkdirSync(ws.at('sub'));
    ws.write('sub/victim.txt', 'ORIGINAL\n');
    fs.writeFileSync(path.join(ws.outside, 'victim.txt'), 'ORIGINAL\n');
    fs.symlinkSync(ws.outside, ws.at('alt'));
    const tool = createEditFileTool();
    const s = swapper(ws, 'sub', 'alt', RACE_MS);
    const codes: Record<string, number> = {};
    const end = Date.now() + RACE_MS - 200;
    while (Date.now() < end) {
      const r = await call(tool, { path: 'sub/victim.txt', oldText: 'ORIGINAL', newText: 'EDITED' }, ws.ctx());
      codes[r.code ?? 'ok'] = (codes[r.code ?? 'ok'] ?? 0) + 1;
      // Put the text back for the next round, in the real folder only (wherever it is now).
      for (const d of ['sub', 'alt', 'sub.held'])
        try {
          if (fs.lstatSync(ws.at(d)).isDirectory()) fs.writeFileSync(ws.at(`${d}/victim.txt`), 'ORIGINAL\n');
        } catch {}
    }
    await s.swaps;
    assert.ok((codes.ok ?? 0) > 0, `some edits went through: ${JSON.stringify(codes)}`);
    assert.equal(
      fs.readFileSync(path.join(ws.outside, 'victim.txt'), 'utf8'),
      'ORIGINAL\n',
      `the file outside was never edited (calls: ${JSON.stringify(codes)})`,
    );
    assert.deepEqual(fs.readdirSync(ws.outside), ['victim.txt'], 'no temp file was left outside');
  });

  it('write_file never reaches .git/config through a folder swapped for a link to .git (a protected path, with no approval)', async () => {
    fs.mkdirSync(ws.at('.git'));
    ws.write('.git/config', '[core]\n\tbare = false\n');
    fs.mkdirSync(ws.at('sub2'));
    fs.symlinkSync(ws.at('.git'), ws.at('gitlink'));
    const tool = createWriteFileTool();
    const s = swapper(ws, 'sub2', 'gitlink', RACE_MS);
    const end = Date.now() + RACE_MS - 200;
    let n = 0;
    while (Date.now() < end) {
      await call(tool, { path: 'sub2/config', content: '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' }, ws.ctx());
      n++;
    }
    await s.swaps;
    assert.ok(n > 10);
    assert.equal(ws.read('.git/config'), '[core]\n\tbare = false\n', '.git/config is untouched');
    assert.deepEqual(fs.readdirSync(ws.at('.git')), ['config'], 'nothing else appeared in .git');
  });

  it('read_file never returns a file outside through the swapped folder', async () => {
    fs.mkdirSync(ws.at('sub'));
    ws.write('sub/f.txt', 'inside\n');
    fs.writeFileSync(path.join(ws.outside, 'f.txt'), 'SECRET outside\n');
    fs.symlinkSync(ws.outside, ws.at('alt'));
    const tool = createReadFileTool();
    const s = swapper(ws, 'sub', 'alt', RACE_MS);
    const end = Date.now() + RACE_MS - 200;
    let read = 0;
    while (Date.now() < end) {
      const r = await call(tool, { path: 'sub/f.txt' }, ws.ctx({ sandbox: 'read-only' }));
      assert.ok(!r.content.includes('SECRET'), `read_file returned the file outside: ${r.content}`);
      if (!r.isError) read++;
    }
    await s.swaps;
    assert.ok(read > 0, 'some reads went through');
  });
});
