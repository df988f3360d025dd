import type { Harness } from '../core/harness';
import type { ParsedArgs } from './args';
import { harnessConfig } from './config';
import { openHarness } from './open-harness';
import type { Io } from './output';

/**
 * A harness for a command that never calls the model (`arbor mcp`, `arbor worktree`): no API
 * key is needed, so a placeholder stands in when none is set.
 */
export function keylessHarness(command: string): (args: ParsedArgs, io: Io) => Promise<Harness> {
  return (args, io) => openHarness(harnessConfig(args, { ...io.env, ARBOR_API_KEY: io.env.ARBOR_API_KEY || `not-used-by-arbor-${command}` }), io);
}
