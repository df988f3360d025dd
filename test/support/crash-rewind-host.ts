// A host killed with -9 in the middle of a rewind (decision 0059, amended in s48): opens a
// harness on a store, plans the rewind of a session to a seq, and applies it with the first
// rename onto a file named `<victim>` followed at once by SIGKILL — after that file was
// restored, before the rest of its folder was and before the rewind's record. A victim of
// `record` kills it instead as the rewind's intent is removed: after its record.
//   node crash-rewind-host.js <storeDir> <workspace> <baseURL> <sessionId> <toSeq> <victim>
import * as path from 'node:path';
import { openCrashHarness } from './crash-host';

// The module objects themselves (not namespace copies): the batch's `fs.renameSync` and the
// intent's `fsp.rm` read them at each call.
import fs = require('node:fs');
import fsp = require('node:fs/promises');

void (async () => {
  const [storeDir, workspace, baseURL, sessionId, toSeq, victim] = process.argv.slice(2);
  const h = await openCrashHarness(storeDir, workspace, baseURL);
  const plan = await h.checkpoints.plan({ sessionId, toSeq: Number(toSeq) });
  process.stdout.write(`planned ${plan.files.length}\n`);
  const rename = fs.renameSync;
  fs.renameSync = (from: fs.PathLike, to: fs.PathLike) => {
    rename(from, to);
    if (path.basename(String(to)) === victim) process.kill(process.pid, 'SIGKILL');
  };
  const rm = fsp.rm;
  fsp.rm = (p: fs.PathLike, o?: fs.RmOptions) => {
    if (victim === 'record' && /[/\\]rewinds[/\\][^/\\]+\.json$/.test(String(p))) process.kill(process.pid, 'SIGKILL');
    return rm(p, o);
  };
  await h.checkpoints.apply(plan);
  process.stdout.write('applied whole: the kill never came\n');
})();
