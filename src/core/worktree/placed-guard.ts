import { protectedNameReason } from '../tools/protected-names';
import type { MergeConflict } from './merge';

/**
 * A placed child's change to a protected path (decision 0060, amended in s49): its writes there
 * were approved, if at all, on the far side, which a compromised machine skips; here they would
 * configure the editor, git or Arbor (a task VS Code runs on opening the folder). Held until the
 * user applies again saying so.
 */
export function placedGuard(rel: string): MergeConflict | undefined {
  const reason = rel
    .split('/')
    .map((part) => protectedNameReason(part))
    .find(Boolean);
  return reason
    ? {
        path: rel,
        message: `${rel} is a protected path (${reason}), and it came from another machine, where no one here approved it: review it, then apply again saying so (the panel asks; \`arbor worktree apply ID --allow-protected\`)`,
        protected: true,
      }
    : undefined;
}
