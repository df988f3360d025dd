// A host meant to be killed with worktrees open (decision 0060): opens a harness on a store,
// starts a continuable worktree child whose model reply stalls (the test's server scripts
// `[[tag]]` so), and makes a second worktree the way a crash between `git worktree add` and the
// child's publish leaves one (a folder and branch no session owns). Prints `child <id>` once
// the child's turn is on disk, then waits to be killed with -9.
//   node crash-worktree-host.js <storeDir> <workspace> <baseURL> <tag>
import { openCrashHarness } from './crash-host';

void (async () => {
  const [storeDir, workspace, baseURL, tag] = process.argv.slice(2);
  const h = await openCrashHarness(storeDir, workspace, baseURL);
  const root = await h.createSession({ title: 'crash' });
  const { childId } = await h.subagents.startContinuable(root, 'spawn', { prompt: `[[${tag}]] task`, label: tag, isolation: 'worktree' });
  await h.worktrees.create(`${root.id}.ghost0`, 'ghost', workspace);
  const until = Date.now() + 30_000;
  while (!h.store.summaryOf(childId)?.openTurn && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  await h.resident(childId)?.flush();
  process.stdout.write(`child ${childId}\n`);
  setInterval(() => undefined, 1000);
})();
