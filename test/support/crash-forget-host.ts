// A host killed with -9 between a deletion and its sweep of checkpoint blobs (decision 0059,
// amended s57): opens a harness on a store, deletes a session, and is killed as the sweep first
// looks at the store's `checkpoints` folder — the deletion durable, no blob removed yet.
//   node crash-forget-host.js <storeDir> <workspace> <baseURL> <sessionId>
import { openCrashHarness } from './crash-host';

// The module object itself (not a namespace copy): the sweep reads `fsp.readdir` at each call.
import fsp = require('node:fs/promises');

void (async () => {
  const [storeDir, workspace, baseURL, sessionId] = process.argv.slice(2);
  const h = await openCrashHarness(storeDir, workspace, baseURL);
  const readdir = fsp.readdir;
  (fsp as { readdir: unknown }).readdir = (p: string, ...rest: unknown[]) => {
    if (/[/\\]checkpoints$/.test(String(p))) process.kill(process.pid, 'SIGKILL');
    return (readdir as (...a: unknown[]) => unknown)(p, ...rest);
  };
  await h.deleteSession(sessionId);
  await h.whenForgotten();
  process.stdout.write('deleted and swept: the kill never came\n');
})();
