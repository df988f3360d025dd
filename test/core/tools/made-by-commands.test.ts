// Decision 0111: the protected folders a confined command makes below a root's top are recorded,
// with the real bubblewrap and real files. The walk before each command and the one after it see
// them appear; the record (a file outside the workspace) names them by device, inode and birth.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MadeRecord } from '../../../src/core/tools/made-by-commands';
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
});
