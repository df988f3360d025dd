// placement.sync.vs_git (issue 26, decision 0072): the ssh placement's workspace sync — `prepare`
// (the base commit there and the node's worktree made) plus `collect` (the node's changes
// committed there and fetched home) — ÷ a plain `git push` of the same base commit plus a plain
// `git fetch` of a commit with the same changes, over the same loopback sshd with the same ssh
// options. A 1,000-file repository with a few uncommitted changes; each pair starts from fresh
// copies of the same local repository and fresh remote folders, Arbor's run and git's alternating
// first; the medians of the pairs' times. The changes themselves are made on the other side
// untimed. Each ssh connection is a real login (the user's shell start-up files run each time),
// which is why a step is one connection (decision 0072). Since decision 0081 a placed child's
// sync rides on the placement's kept connection instead; this times the push/fetch path that
// remains its fallback (an older arbor there, a bundle past 256 MiB, the container transport).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { workspaceCommit } from '../src/core/placement/base';
import { SshTransport } from '../src/core/placement/ssh';
import { gitSshCommand } from '../src/core/placement/ssh-args';
import type { PlacementSettings } from '../src/core/placement/types';
import { DEFAULT_BWRAP } from '../src/core/tools/sandbox/detect';
import { sshdMissing, sshPlacement, startSshd } from '../test/support/sshd';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, missed, now, tempDir } from './support';

export const name = 'placement-sync';

const SYNC: FigureSpec = { id: 'placement.sync.vs_git', op: '<=', target: 1.5 };
export const figures: readonly FigureSpec[] = [SYNC];

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
const git = (cwd: string, args: string[], env: NodeJS.ProcessEnv = gitEnv) => execFileSync('git', args, { cwd, env, encoding: 'utf8' });

/** 1,000 small files in 50 folders, committed, then a few uncommitted changes; returns the base commit (the parent's state). */
async function makeTemplate(dir: string): Promise<{ ws: string; base: string }> {
  const ws = path.join(dir, 'template');
  for (let d = 0; d < 50; d++) {
    fs.mkdirSync(path.join(ws, `pkg${d}`), { recursive: true });
    for (let f = 0; f < 20; f++) fs.writeFileSync(path.join(ws, `pkg${d}`, `f${f}.ts`), `export const v${f} = ${d * 100 + f};\n`.repeat(30));
  }
  git(ws, ['init', '-q', '-b', 'main']);
  git(ws, ['add', '-A']);
  git(ws, ['commit', '-qm', 'bench']);
  fs.writeFileSync(path.join(ws, 'pkg0', 'f0.ts'), 'changed, not committed\n');
  fs.writeFileSync(path.join(ws, 'untracked.ts'), 'untracked\n');
  const { commit } = await workspaceCommit(ws, [], 'bench', DEFAULT_BWRAP);
  return { ws: fs.realpathSync(ws), base: commit };
}

/** The node's work on the other side (untimed): three changes, a new file, a deletion. */
function work(cwd: string, i: number): void {
  for (const f of ['pkg1/f1.ts', 'pkg2/f2.ts', 'pkg3/f3.ts']) fs.writeFileSync(path.join(cwd, f), `changed there ${i}\n`);
  fs.writeFileSync(path.join(cwd, 'made.ts'), `made there ${i}\n`);
  fs.rmSync(path.join(cwd, 'pkg4/f4.ts'));
}

async function syncFigure(opts: BenchOptions): Promise<Figure> {
  const missing = sshdMissing();
  if (missing) return missed(SYNC, `sshd cannot start: ${missing}`);
  const dir = tempDir('arbor-bench-placement-');
  const sshd = await startSshd();
  try {
    const { ws: template, base } = await makeTemplate(dir);
    const settings = (remoteDir: string): PlacementSettings => sshPlacement(sshd, { name: 'bench', remoteDir });
    const sshEnv = { ...gitEnv, GIT_SSH_COMMAND: gitSshCommand(settings(dir)), GIT_TERMINAL_PROMPT: '0' };
    const copy = (to: string) => {
      execFileSync('cp', ['-a', template, to]);
      return to;
    };

    const arborRun = async (i: number): Promise<number> => {
      const local = copy(path.join(dir, `arbor-local-${i}`));
      const t = new SshTransport(settings(path.join(dir, `arbor-remote-${i}`)), { version: 'bench' });
      let t0 = now();
      const placed = await t.prepare({ nodeId: `s-bench-${i}`, repo: local, commit: base });
      let ms = now() - t0;
      work(placed.cwd, i);
      t0 = now();
      await t.collect(placed, local);
      ms += now() - t0;
      return ms;
    };
    const gitRun = (i: number): number => {
      const local = copy(path.join(dir, `git-local-${i}`));
      const bare = path.join(dir, `git-remote-${i}.git`);
      git(dir, ['init', '-q', '--bare', bare]);
      let t0 = now();
      git(local, ['push', '--quiet', `${sshd.host}:${bare}`, `${base}:refs/heads/base`], sshEnv);
      let ms = now() - t0;
      // The same changes committed on the other side (untimed), then fetched home.
      const wt = path.join(dir, `git-wt-${i}`);
      git(bare, ['worktree', 'add', '--quiet', '--detach', wt, base]);
      work(wt, i);
      git(wt, ['add', '-A']);
      git(wt, ['commit', '-qm', 'changes']);
      git(wt, ['update-ref', 'refs/heads/changes', 'HEAD']);
      t0 = now();
      git(local, ['fetch', '--quiet', '--no-tags', `${sshd.host}:${bare}`, 'refs/heads/changes:refs/remotes/there/changes'], sshEnv);
      ms += now() - t0;
      return ms;
    };

    const pairs = opts.quick ? 3 : 7;
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let i = 0; i < pairs; i++) {
      if (i % 2 === 0) {
        ours.push(await arborRun(i));
        theirs.push(gitRun(i));
      } else {
        theirs.push(gitRun(i));
        ours.push(await arborRun(i));
      }
    }
    const ratio = median(ours.map((o, i) => o / theirs[i]!));
    opts.note(
      `placement sync: prepare + collect ${fmt(median(ours))} ms, git push + git fetch ${fmt(median(theirs))} ms (medians of ${pairs} pairs; ratio = median of the pairs' ratios); ` +
        `1,000 files, loopback sshd; each ssh login here runs the user's shell start-up files`,
    );
    return { ...SYNC, value: ratio };
  } finally {
    await sshd.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  try {
    return [await syncFigure(opts)];
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    opts.note(`placement: ${SYNC.id} failed: ${err instanceof Error ? (err.stack ?? reason) : reason}`);
    return [missed(SYNC, reason.split('\n')[0]!)];
  }
}
