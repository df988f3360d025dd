// A host killed with -9 while a compaction the user asked for waits on its summary request
// (recovery, amended in s49): opens a harness on a store, runs two turns on a root, then asks it to
// compact; the test's server answers the turn and stalls the summary. Prints `compacting <id>`
// once the compaction's start is on disk and its request reached the model, then waits.
//   node crash-compaction-host.js <storeDir> <workspace> <baseURL>
import { openCrashHarness } from './crash-host';

void (async () => {
  const [storeDir, workspace, baseURL] = process.argv.slice(2);
  const h = await openCrashHarness(storeDir, workspace, baseURL);
  const root = await h.createSession({ title: 'compacting' });
  for (const text of ['first', 'second']) {
    await root.accept(text);
    await h.settle();
  }
  void root.compact(1);
  const until = Date.now() + 30_000;
  while (!root.session.events.some((e) => e.type === 'compaction/start') && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  await root.flush();
  process.stdout.write(`compacting ${root.id}\n`);
  setInterval(() => undefined, 1000);
})();
