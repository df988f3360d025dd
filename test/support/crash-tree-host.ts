// A host meant to be killed (the agreement test's crash): opens a harness on an existing store,
// opens the root session it is given, starts a continuable child whose model reply stalls (the
// test's model server scripts `[[tag]]` so), and prints `child <id>` once the child's turn is
// on disk and its request reached the model. Then it waits to be killed with -9.
//   node crash-tree-host.js <storeDir> <workspace> <baseURL> <rootId> <tag>
import { openCrashHarness } from './crash-host';

void (async () => {
  const [storeDir, workspace, baseURL, rootId, tag] = process.argv.slice(2);
  const h = await openCrashHarness(storeDir, workspace, baseURL, { maxConcurrentChildren: 2, releaseDelayMs: 150 });
  const root = await h.openSession(rootId);
  const { childId } = await h.subagents.startContinuable(root, 'spawn', { prompt: `[[${tag}]] task`, label: tag });
  // Once the child's turn has started, make what it wrote durable, then say so.
  const until = Date.now() + 30_000;
  while (!h.store.summaryOf(childId)?.openTurn && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  await h.resident(childId)?.flush();
  process.stdout.write(`child ${childId}\n`);
  setInterval(() => undefined, 1000);
})();
