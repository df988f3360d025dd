// A host killed with -9 while a writing tool call of its agent is under way (decision 0059,
// amended in s49): opens a harness on a store, starts a root on `[[<tag>]] go` (the test's server
// scripts the call), prints `root <id>`, and — with a victim — kills itself at once after the
// first rename onto a file named `<victim>` (write_file's write landed, its step's record not);
// with victim `-` it waits for the test to kill it (a command under way).
//   node crash-call-host.js <storeDir> <workspace> <baseURL> <tag> <victim>
import { killAfterRenameOnto, openCrashHarness } from './crash-host';

void (async () => {
  const [storeDir, workspace, baseURL, tag, victim] = process.argv.slice(2);
  const h = await openCrashHarness(storeDir, workspace, baseURL);
  killAfterRenameOnto(victim);
  const root = await h.createSession({ title: 'crash' });
  process.stdout.write(`root ${root.id}\n`);
  await root.accept(`[[${tag}]] go`);
  setInterval(() => undefined, 1000);
})();
