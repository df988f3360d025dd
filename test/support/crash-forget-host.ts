// A host killed with -9 around a deletion's sweep of checkpoint blobs (decisions 0059 amended s57,
// 0121): opens a harness on a store, deletes a session, and is killed
//   begin  — as the sweep first looks at the store's `checkpoints` folder: the deletion durable, no blob removed yet;
//   unlink — just after the sweep's first removal of a blob: the sweep cut part way;
//   refs   — after the sweep, with the blob index's new file written but not yet renamed over the old one.
//   node crash-forget-host.js <storeDir> <workspace> <baseURL> <sessionId> [begin|unlink|refs]
import * as path from 'node:path';
import { openCrashHarness } from './crash-host';

// The module objects themselves (not namespace copies): the code under test reads them at each call.
import fs = require('node:fs');
import fsp = require('node:fs/promises');

void (async () => {
  const [storeDir, workspace, baseURL, sessionId, at = 'begin'] = process.argv.slice(2);
  const h = await openCrashHarness(storeDir, workspace, baseURL);
  const kill = () => process.kill(process.pid, 'SIGKILL');
  if (at === 'begin') {
    const readdir = fsp.readdir;
    (fsp as { readdir: unknown }).readdir = (p: string, ...rest: unknown[]) => {
      if (/[/\\]checkpoints$/.test(String(p))) kill();
      return (readdir as (...a: unknown[]) => unknown)(p, ...rest);
    };
  } else if (at === 'unlink') {
    const unlinkSync = fs.unlinkSync;
    fs.unlinkSync = (p: fs.PathLike) => {
      unlinkSync(p);
      if (String(p).includes(`${path.sep}objects${path.sep}`)) kill();
    };
  } else {
    const rename = fsp.rename;
    fsp.rename = async (from: Parameters<typeof rename>[0], to: Parameters<typeof rename>[1]) => {
      if (path.basename(String(to)) === 'refs.json') kill();
      return rename(from, to);
    };
  }
  await h.deleteSession(sessionId);
  await h.whenForgotten();
  process.stdout.write('deleted and swept: the kill never came\n');
})();
