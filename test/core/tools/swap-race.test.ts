import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createEditFileTool } from '../../../src/core/tools/edit-file';
import { createListFilesTool } from '../../../src/core/tools/list-files';
import { createReadFileTool } from '../../../src/core/tools/read-file';
import { createSearchFilesTool } from '../../../src/core/tools/search-files';
import type { Tool, ToolContext, ToolResult } from '../../../src/core/tools/tool';
import { createWriteFileTool } from '../../../src/core/tools/write-file';
import { exchangeRuns, swapPaths } from '../../support/swapper';
import { call, makeWorkspace, snapshot, type Workspace } from './fixture';

// Decision 0097, as an attacker tries it: while a program in the workspace (what a confined
// run_command can run) swaps a real folder for a symlink to outside the workspace — or to
// `.git` — again and again, the file tools are called on a path through that folder. Each
// call is checked (the folder is real then) and then acts; the swap lands between the two
// often enough that the tools wrote outside the workspace and into `.git/config` before their
// folders were pinned (beneath.ts). Nothing may land anywhere but the real folder.

const RACE_MS = 4000;

/** What a race calls: `tool` with `args(i)` in round `i`, in `ws.ctx(over)`, while `swap`'s real folder and link trade places. */
interface Race {
  swap: [real: string, link: string];
  tool: Tool;
  args: (i: number) => Record<string, unknown>;
  over?: Partial<ToolContext>;
}

/** Calls the race's tool round after round for RACE_MS, handing each result to `each`; the swapper's count of swaps once it stopped. */
async function raceCalls(ws: Workspace, race: Race, each: (r: ToolResult) => void): Promise<number> {
  const s = swapPaths(ws.at(race.swap[0]), ws.at(race.swap[1]), RACE_MS);
  const end = Date.now() + RACE_MS - 200;
  for (let i = 0; Date.now() < end; i++) each(await call(race.tool, race.args(i), ws.ctx(race.over)));
  return s.swaps;
}

/** `sub/<inside[0]>` holding `inside[1]` in the workspace, `<outside[0]>` holding `outside[1]` outside it, and `alt` a link to the outside folder. */
function subAndOutside(ws: Workspace, inside: [string, string], outside: [string, string]): void {
  fs.mkdirSync(ws.at('sub'));
  ws.write(`sub/${inside[0]}`, inside[1]);
  fs.writeFileSync(path.join(ws.outside, outside[0]), outside[1]);
  fs.symlinkSync(ws.outside, ws.at('alt'));
}

describe('file tools against a folder swapped for a symlink while they act (decision 0097)', function () {
  this.timeout(120_000);
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  it('write_file never writes through the swapped folder: nothing lands outside, every call either wrote the real folder or was refused', async () => {
    fs.mkdirSync(ws.at('sub'));
    fs.symlinkSync(ws.outside, ws.at('alt'));
    const before = snapshot(ws.outside);
    const codes: Record<string, number> = {};
    const swaps = await raceCalls(
      ws,
      { swap: ['sub', 'alt'], tool: createWriteFileTool(), args: (i) => ({ path: 'sub/pwn.txt', content: `written ${i}` }) },
      (r) => {
        codes[r.code ?? 'ok'] = (codes[r.code ?? 'ok'] ?? 0) + 1;
      },
    );
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
    subAndOutside(ws, ['victim.txt', 'ORIGINAL\n'], ['victim.txt', 'ORIGINAL\n']);
    const codes: Record<string, number> = {};
    await raceCalls(
      ws,
      { swap: ['sub', 'alt'], tool: createEditFileTool(), args: () => ({ path: 'sub/victim.txt', oldText: 'ORIGINAL', newText: 'EDITED' }) },
      (r) => {
        codes[r.code ?? 'ok'] = (codes[r.code ?? 'ok'] ?? 0) + 1;
        // Put the text back for the next round, in the real folder only (wherever it is now).
        for (const d of ['sub', 'alt', 'sub.held'])
          try {
            if (fs.lstatSync(ws.at(d)).isDirectory()) fs.writeFileSync(ws.at(`${d}/victim.txt`), 'ORIGINAL\n');
          } catch {}
      },
    );
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
    let n = 0;
    await raceCalls(
      ws,
      { swap: ['sub2', 'gitlink'], tool: createWriteFileTool(), args: () => ({ path: 'sub2/config', content: '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' }) },
      () => {
        n++;
      },
    );
    assert.ok(n > 10);
    assert.equal(ws.read('.git/config'), '[core]\n\tbare = false\n', '.git/config is untouched');
    assert.deepEqual(fs.readdirSync(ws.at('.git')), ['config'], 'nothing else appeared in .git');
  });

  it('read_file never returns a file outside through the swapped folder', async () => {
    subAndOutside(ws, ['f.txt', 'inside\n'], ['f.txt', 'SECRET outside\n']);
    let read = 0;
    await raceCalls(ws, { swap: ['sub', 'alt'], tool: createReadFileTool(), args: () => ({ path: 'sub/f.txt' }), over: { sandbox: 'read-only' } }, (r) => {
      assert.ok(!r.content.includes('SECRET'), `read_file returned the file outside: ${r.content}`);
      if (!r.isError) read++;
    });
    assert.ok(read > 0, 'some reads went through');
  });
  // The walking tools read folders and files they did not resolve one by one: a folder the
  // walk met as a folder could be a link by the time it was listed or its files opened, and
  // both followed it (session 50: outside files' lines came back, e.g. from /run/user, which
  // the sandbox hides from the racing command itself). They walk through pinned folders now.
  it('search_files never returns a line of a file outside through the swapped folder, nor through a folder it names', async () => {
    subAndOutside(ws, ['f.txt', 'inside line\n'], ['f.txt', 'SECRET outside\n']);
    let found = 0;
    const args = (i: number) => ({ pattern: 'SECRET|inside', ...(i % 2 ? { path: 'sub/f.txt' } : {}) });
    await raceCalls(ws, { swap: ['sub', 'alt'], tool: createSearchFilesTool(), args, over: { sandbox: 'read-only' } }, (r) => {
      assert.ok(!r.content.includes('SECRET outside'), `search_files returned a line outside: ${r.content}`);
      if (r.content.includes('inside line')) found++;
    });
    assert.ok(found > 0, 'some searches found the file inside');
  });

  it('list_files never lists a folder outside through the swapped folder', async () => {
    subAndOutside(ws, ['inside.txt', 'x'], ['secret-name.txt', 'x']);
    let listed = 0;
    await raceCalls(
      ws,
      { swap: ['sub', 'alt'], tool: createListFilesTool(), args: (i) => (i % 2 ? { path: 'sub' } : { recursive: true }), over: { sandbox: 'read-only' } },
      (r) => {
        assert.ok(!r.content.includes('secret-name'), `list_files listed the folder outside: ${r.content}`);
        if (r.content.includes('inside.txt')) listed++;
      },
    );
    assert.ok(listed > 0, 'some listings showed the folder inside');
  });
});
