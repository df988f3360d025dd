// A host killed with -9 while a writing tool call of its agent is under way (decision 0059,
// amended in s49): opens a harness on a store, starts a root on `[[<tag>]] go` (the test's server
// scripts the call), prints `root <id>`, and — with a victim — kills itself at once after the
// first rename onto a file named `<victim>` (write_file's write landed, its step's record not);
// with victim `-` it waits for the test to kill it (a command under way).
//   node crash-call-host.js <storeDir> <workspace> <baseURL> <tag> <victim>
import * as path from 'node:path';
import { Harness } from '../../src/core/harness';

// The module object itself (not a namespace copy): the atomic write's `fsp.rename` reads it at each call.
import fsp = require('node:fs/promises');

void (async () => {
  const [storeDir, workspace, baseURL, tag, victim] = process.argv.slice(2);
  const h = await Harness.open({
    storeDir,
    workspace: [workspace],
    model: { baseURL, name: 'test-model', apiKey: 'test', maxRetries: 0, timeoutMs: 60_000 },
    sandbox: 'workspace-write',
    approval: 'never',
  });
  const rename = fsp.rename;
  fsp.rename = async (from: Parameters<typeof rename>[0], to: Parameters<typeof rename>[1]) => {
    await rename(from, to);
    if (path.basename(String(to)) === victim) process.kill(process.pid, 'SIGKILL');
  };
  const root = await h.createSession({ title: 'crash' });
  process.stdout.write(`root ${root.id}\n`);
  await root.accept(`[[${tag}]] go`);
  setInterval(() => undefined, 1000);
})();
