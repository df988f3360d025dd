import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readInstructions } from '../../../src/core/project/instructions';
import { INSTRUCTIONS_SECTION, ProjectFiles } from '../../../src/core/project/project-files';
import type { PromptSection } from '../../../src/core/scope/prompt';
import { ScopeRegistry } from '../../../src/core/scope/registry';
import { swapPaths, whileSwapping } from '../../support/swapper';

describe('project instructions: AGENTS.md from the root down, CLAUDE.md where a level has none, the user file first', () => {
  let dir: string;
  let root: string;
  const write = (rel: string, text: string) => {
    const p = path.join(dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
    return p;
  };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-instr-'));
    root = path.join(dir, 'ws');
    fs.mkdirSync(root);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('concatenates farthest first, nearest last, and says the nearer wins; CLAUDE.md only where no AGENTS.md', () => {
    const user = write('home/.arbor/AGENTS.md', 'USER: prefer tabs');
    write('ws/AGENTS.md', 'ROOT: use spaces');
    write('ws/CLAUDE.md', 'ROOT-CLAUDE: never read when AGENTS.md is there');
    write('ws/pkg/CLAUDE.md', 'PKG-CLAUDE: run npm test');
    write('ws/pkg/lib/AGENTS.md', 'LIB: two spaces here');
    write('ws/other/AGENTS.md', 'OTHER: not on the path');
    const r = readInstructions({ root, cwd: path.join(root, 'pkg', 'lib'), userFile: user, maxBytes: 10_000 });
    assert.deepEqual(
      r.files.map((f) => f.shown),
      ['user AGENTS.md', 'AGENTS.md', 'pkg/CLAUDE.md', 'pkg/lib/AGENTS.md'],
    );
    const order = ['USER:', 'ROOT:', 'PKG-CLAUDE:', 'LIB:'].map((s) => r.text.indexOf(s));
    assert.ok(
      order.every((v, i) => v > 0 && (i === 0 || v > order[i - 1])),
      `order ${order}`,
    );
    assert.ok(!r.text.includes('ROOT-CLAUDE') && !r.text.includes('OTHER:'));
    assert.match(r.text, /later \(nearer\) file wins/);
    assert.equal(r.cutBytes, 0);
    assert.ok(!r.text.includes('capped'));
  });

  it('a cwd outside the workspace reads the root only; no files, no section', () => {
    write('ws/AGENTS.md', 'ROOT');
    write('elsewhere/AGENTS.md', 'OUTSIDE');
    const r = readInstructions({ root, cwd: path.join(dir, 'elsewhere'), maxBytes: 1000 });
    assert.deepEqual(
      r.files.map((f) => f.shown),
      ['AGENTS.md'],
    );
    fs.rmSync(path.join(root, 'AGENTS.md'));
    const none = readInstructions({ root, maxBytes: 1000 });
    assert.deepEqual([none.files, none.text], [[], '']);
  });

  it('the cap cuts the text, counts what was left out and says so in the prompt', () => {
    write('ws/AGENTS.md', `ROOT ${'r'.repeat(300)}`);
    write('ws/sub/AGENTS.md', `SUB ${'s'.repeat(300)}`);
    const r = readInstructions({ root, cwd: path.join(root, 'sub'), maxBytes: 400 });
    assert.deepEqual(
      r.files.map((f) => [f.shown, f.bytes, f.included]),
      [
        ['AGENTS.md', 305, 305],
        ['sub/AGENTS.md', 304, 95],
      ],
    );
    assert.equal(r.cutBytes, 209);
    assert.match(r.text, /capped at 400 bytes; 209 bytes were left out \(sub\/AGENTS\.md\)/);
    assert.ok(!r.text.includes('s'.repeat(96)));
  });

  it('a workspace AGENTS.md that links outside the workspace is not read (a secret never reaches the prompt)', () => {
    const secret = write('secret.txt', 'SECRET-TOKEN-123');
    fs.symlinkSync(secret, path.join(root, 'AGENTS.md'));
    write('ws/sub/AGENTS.md', 'SUB rules');
    fs.symlinkSync(secret, path.join(root, 'sub', 'CLAUDE.md'));
    const r = readInstructions({ root, cwd: path.join(root, 'sub'), maxBytes: 1000 });
    assert.ok(!r.text.includes('SECRET-TOKEN-123'));
    assert.deepEqual(
      r.skipped.map((s) => [path.basename(s.path), s.why]),
      [['AGENTS.md', 'it links outside the workspace']],
    );
    assert.deepEqual(
      r.files.map((f) => f.shown),
      ['sub/AGENTS.md'],
    );
  });

  it('attack: an AGENTS.md swapped for a FIFO between the look and the read never blocks the reader', async () => {
    // A command in the workspace renames a FIFO and a file over AGENTS.md in turn, as fast as it
    // can: a read that opens what it looked at a moment before would wait forever for a writer
    // (the whole extension host with it). The reads run in a child process, so a hang is a timeout.
    const fifo = path.join(root, 'f.fifo');
    const swap = `
      const fs = require('fs'); const { execFileSync } = require('child_process');
      const root = ${JSON.stringify(root)};
      fs.writeFileSync(root + '/f.txt', 'rules');
      for (;;) {
        try { execFileSync('mkfifo', [root + '/f.fifo']); fs.renameSync(root + '/f.fifo', root + '/AGENTS.md'); } catch {}
        try { fs.linkSync(root + '/f.txt', root + '/t1'); fs.renameSync(root + '/t1', root + '/AGENTS.md'); } catch {}
      }`;
    // Its own process group: the Stop below ends its `mkfifo` too, which could otherwise still make a FIFO as the folder goes.
    const swapper = spawn(process.execPath, ['-e', swap], { stdio: 'ignore', detached: true });
    const gone = new Promise((r) => swapper.once('exit', r));
    try {
      for (let i = 0; i < 200 && !fs.existsSync(path.join(root, 'AGENTS.md')); i++) await new Promise((r) => setTimeout(r, 10));
      const module = path.join(__dirname, '../../../src/core/project/instructions.js');
      const read = `
        const { readInstructions } = require(${JSON.stringify(module)});
        const t = Date.now(); let n = 0;
        while (Date.now() - t < 3000) { readInstructions({ root: ${JSON.stringify(root)}, maxBytes: 1000 }); n++; }
        process.stdout.write(String(n));`;
      const r = spawnSync(process.execPath, ['-e', read], { timeout: 15_000, encoding: 'utf8' });
      assert.equal(r.signal, null, 'the reads ended by themselves (none waited on the FIFO)');
      assert.equal(r.status, 0, r.stderr);
      assert.ok(Number(r.stdout) > 0);
    } finally {
      process.kill(-swapper.pid!, 'SIGKILL');
      await gone;
      fs.rmSync(fifo, { force: true });
    }
  });

  it('attack: an AGENTS.md swapped for a link to a secret between the look and the read never puts the secret in the prompt', async () => {
    // The look resolved the file inside the workspace; a command exchanging it with a link to a
    // file outside (one the sandbox hides from the command itself, under /run/user) made the read
    // that followed open the secret, and it went into every agent's system prompt (session 50).
    const secret = write('outside/secret.txt', 'SECRET-TOKEN-777');
    write('ws/AGENTS.md', 'inside rules');
    fs.symlinkSync(secret, path.join(root, 'alt'));
    const s = swapPaths(path.join(root, 'AGENTS.md'), path.join(root, 'alt'), 3000);
    let read = 0;
    let seen = 0;
    let leaked = '';
    await whileSwapping(s, () => {
      const r = readInstructions({ root, maxBytes: 1000 });
      if (r.text.includes('SECRET-TOKEN')) leaked = r.text;
      if (r.text.includes('inside rules')) read++;
      if (r.skipped.length) seen++;
    });
    const swaps = await s.swaps;
    assert.ok(swaps > 10 && seen > 0, `the swapper ran (${swaps} swaps) and the link was seen (${seen} times)`);
    assert.equal(leaked, '', 'the secret outside never reached the prompt');
    assert.ok(read > 0, 'the file inside was read');
  });

  it('ProjectFiles re-reads only when a file changed, and replaces the section', () => {
    const prompts = new ScopeRegistry<PromptSection>();
    const p = write('ws/AGENTS.md', 'version one');
    const project = new ProjectFiles({ root }, prompts);
    let heard = 0;
    project.onChange(() => heard++);
    const section = () => prompts.view().find((s) => s.name === INSTRUCTIONS_SECTION)?.text ?? '';
    assert.match(section(), /version one/);
    assert.equal(project.refresh(), false, 'nothing changed: not re-read');
    fs.writeFileSync(p, 'version two, longer');
    assert.equal(project.refresh(), true);
    assert.match(section(), /version two/);
    assert.equal(heard, 1);
    fs.rmSync(p);
    project.refresh();
    assert.equal(section(), '', 'the file is gone: so is the section');
    project.dispose();
  });
});
