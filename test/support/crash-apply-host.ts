// A host killed with -9 in the middle of a worktree apply (decision 0060, amended in s49): opens a
// harness on a store and applies a worktree child's work, with the first rename onto a file named
// `<victim>` followed at once by SIGKILL — after that file was written, before the rest were and
// before the child's `applied` record. A victim of `record` kills it as the apply's intent is
// removed instead: after its record, before its worktree is removed. A victim of `rm:<name>` or
// `rmdir:<name>` kills it just after the first removal of a file or folder named `<name>` (a folder
// the child made a file: its entries, then the emptied folder, decision 0060 amended in s57).
//   node crash-apply-host.js <storeDir> <workspace> <baseURL> <childId> <victim>
import * as path from 'node:path';
import { killAfterRenameOnto, openCrashHarness } from './crash-host';

// The module object itself (not a namespace copy): the intent's removal reads `fsp.rm` at each call.
import fsp = require('node:fs/promises');

void (async () => {
  const [storeDir, workspace, baseURL, childId, victim] = process.argv.slice(2);
  const h = await openCrashHarness(storeDir, workspace, baseURL);
  killAfterRenameOnto(victim);
  const rm = fsp.rm;
  fsp.rm = async (p: Parameters<typeof rm>[0], o?: Parameters<typeof rm>[1]) => {
    if (victim === 'record' && /[/\\]applies[/\\][^/\\]+\.json$/.test(String(p))) process.kill(process.pid, 'SIGKILL');
    await rm(p, o);
    if (victim === `rm:${path.basename(String(p))}`) process.kill(process.pid, 'SIGKILL');
  };
  const rmdir = fsp.rmdir;
  fsp.rmdir = async (p: Parameters<typeof rmdir>[0], o?: Parameters<typeof rmdir>[1]) => {
    await rmdir(p, o);
    if (victim === `rmdir:${path.basename(String(p))}`) process.kill(process.pid, 'SIGKILL');
  };
  process.stdout.write('applying\n');
  await h.worktrees.apply(childId);
  process.stdout.write('applied whole: the kill never came\n');
})();
