import { Harness, type HarnessConfig } from '../core/harness';
import { recoveryNotes } from '../core/recovered-work';
import type { Io } from './output';

/** Open the harness and say, once, what it finished of work a crash cut (a rewind, a worktree apply). */
export async function openHarness(config: HarnessConfig, io: Io): Promise<Harness> {
  const h = await Harness.open(config);
  for (const note of recoveryNotes(h.recoveredWork)) io.err(`arbor: ${note}`);
  return h;
}
