import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../src/core/session/events';
import { scanJournal } from '../../src/core/store';

/** The events of `session` the tree file's journal holds on disk now (what a crash would keep). */
export function journaled(storeDir: string, tree: string, session: string): SessionEvent[] {
  const wal = path.join(storeDir, 'trees', `${tree}.wal`);
  const out: SessionEvent[] = [];
  for (const rec of scanJournal(fs.readFileSync(wal)).records)
    for (const op of rec.ops as { op: string; session?: string; events?: SessionEvent[] }[])
      if (op.op === 'events' && op.session === session) out.push(...(op.events ?? []));
  return out;
}
