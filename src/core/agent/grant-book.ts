import { randomUUID } from 'node:crypto';
import { activeGrants, type GrantBook, grantCovers } from '../policy/grants';
import type { SessionWriter } from './session-writer';

/**
 * The grants of the writer's own session: looked up in its log as it is now (so a revoke
 * appended a moment ago already counts), and recorded as a durable `approval/grant` event
 * before the tool goes on.
 */
export function grantBookOf(writer: SessionWriter): GrantBook {
  return {
    find(tool, target, sandbox) {
      const s = writer.session;
      return activeGrants(s.header, s.events).find((g) => grantCovers(g, tool, target, sandbox));
    },
    async record(tool, scope, sandbox) {
      await writer.append({ type: 'approval/grant', grantId: randomUUID(), tool, scope, sandbox });
    },
  };
}
