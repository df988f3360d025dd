// Restricted Mode (an untrusted workspace: read-only, approval never, as the extension configures
// it, with `trusted: () => false`) must not let the repository's own git configuration run a program when Arbor runs git on
// it. The attacker controls `.git/config` (shipped in an archive) and the tracked files.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitIn, worktreeWorld } from '../worktree/fixture';

describe('untrusted workspace: git config of the repository runs no program', () => {
  const w = worktreeWorld({ sandbox: 'read-only', approval: 'never', trusted: () => false });

  function plant(): string {
    const marker = path.join(w.base, 'PWNED');
    const evil = path.join(w.ws, 'evil.sh');
    fs.writeFileSync(evil, `#!/bin/sh\necho "$0 $*" >> '${marker}'\ncat\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(w.ws, '.gitattributes'), '*.txt filter=x diff=x\n');
    gitIn(w.ws, 'add', '.gitattributes', 'evil.sh');
    gitIn(w.ws, 'commit', '-qm', 'attrs');
    // Set after the commit (the attacker's archive ships the config as it is).
    gitIn(w.ws, 'config', 'core.fsmonitor', evil);
    gitIn(w.ws, 'config', 'filter.x.clean', evil);
    gitIn(w.ws, 'config', 'filter.x.smudge', evil);
    gitIn(w.ws, 'config', 'diff.x.textconv', evil);
    gitIn(w.ws, 'config', 'diff.external', evil);
    fs.writeFileSync(path.join(w.ws, 'a.txt'), 'changed again\n');
    return marker;
  }

  it('a worktree child (isolation: worktree) runs no program named by .git/config', async () => {
    const marker = plant();
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: 'look', label: 'look', isolation: 'worktree' }).catch((e: Error) => e);
    if (!(run instanceof Error)) {
      await run.result.catch(() => undefined);
      await run.dispose();
    }
    assert.equal(fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '', '', 'a program named by the untrusted .git/config ran');
    assert.ok(
      run instanceof Error && /not trusted/.test(run.message),
      `the start is refused, saying why (got ${run instanceof Error ? run.message : 'a child'})`,
    );
  });

  describe('a worktree made without its files, while the workspace was trusted', () => {
    let trusted = true;
    const t = worktreeWorld({ sandbox: 'read-only', approval: 'never', trusted: () => trusted });

    it('gets no files from git once the workspace is no longer trusted, saying why; trusted again, it does', async () => {
      trusted = true;
      const marker = path.join(t.base, 'PWNED');
      // Made while trusted, as a placed child's is (a plain repository): the entry and branch, no file written yet.
      const place = await t.t.h.worktrees.create('s-fill-child', 'fill', t.ws, { filesLater: true });
      assert.equal(fs.existsSync(path.join(place.path, 'a.txt')), false, 'made without its files');
      // Then the repository's own files name a program for checking files out.
      const evil = path.join(t.base, 'evil.sh');
      fs.writeFileSync(evil, `#!/bin/sh\necho "$0 $*" >> '${marker}'\ncat\n`, { mode: 0o755 });
      fs.mkdirSync(path.join(t.ws, '.git', 'info'), { recursive: true });
      fs.writeFileSync(path.join(t.ws, '.git', 'info', 'attributes'), '*.txt filter=x\n');
      gitIn(t.ws, 'config', 'filter.x.smudge', evil);
      trusted = false;
      await assert.rejects(t.t.h.worktrees.fill(place.path), /not trusted/);
      assert.equal(fs.existsSync(path.join(place.path, 'a.txt')), false, 'no file written');
      assert.equal(fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '', '', 'the smudge filter ran while untrusted');
      trusted = true;
      await t.t.h.worktrees.fill(place.path);
      assert.ok(fs.existsSync(path.join(place.path, 'a.txt')), 'trusted again, its files are written');
      assert.match(fs.readFileSync(marker, 'utf8'), /evil\.sh/, "(trusted, the repository's own filter runs, as git runs it)");
    });

    it("a worktree review or listing (Try N Ways' comparison, the worktree list) runs no git once untrusted", async () => {
      trusted = true;
      const marker = path.join(t.base, 'PWNED');
      t.server.setFallback(() => ({ text: 'an answer' }));
      await t.root.accept('rewrite a.txt', { kind: 'user' });
      await t.t.h.settle();
      const seq = t.root.session.events.find((e) => e.type === 'user/message')?.seq ?? 0;
      const { group } = await t.t.h.bestOf.start(t.root.id, seq, { ways: [{ model: 'model-a' }, { model: 'model-b' }] });
      await t.t.h.settle();
      // Then the repository's own files name programs for git's reads.
      const evil = path.join(t.base, 'evil.sh');
      fs.writeFileSync(evil, `#!/bin/sh\necho "$0 $*" >> '${marker}'\ncat\n`, { mode: 0o755 });
      fs.mkdirSync(path.join(t.ws, '.git', 'info'), { recursive: true });
      fs.writeFileSync(path.join(t.ws, '.git', 'info', 'attributes'), '* filter=x diff=x\n');
      for (const key of ['filter.x.clean', 'filter.x.smudge', 'diff.x.textconv', 'core.fsmonitor']) gitIn(t.ws, 'config', key, evil);
      trusted = false;
      const view = await t.t.h.bestOf.view(group);
      assert.equal(view.ways.length, 2);
      const listed = await t.t.h.worktrees.list();
      assert.equal(listed.length, 2);
      assert.equal(fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '', '', 'git ran a program named by the repository while untrusted');
      trusted = true;
    });
  });
});
