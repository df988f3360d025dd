import type { Harness } from '../../../src/core/harness';
import type { CheckpointEvent, SessionEvent } from '../../../src/core/session/events';
import { eventsOf, ofType } from '../subagent/helpers';

export const write = (path: string, content: string) => ({ name: 'write_file', arguments: { path, content } });
export const run = (command: string) => ({ name: 'run_command', arguments: { command } });
export const delegate = (tag: string, more: Record<string, unknown> = {}) => ({
  name: 'subagent',
  arguments: { prompt: `[[${tag}]] work`, label: tag, ...more },
});

export const checkpointsOf = (events: readonly SessionEvent[]): CheckpointEvent[] => ofType(events, 'checkpoint');

/** The seq of a session's first `user/message`: the point before anything it did. */
export async function startOf(h: Harness, id: string): Promise<number> {
  const first = ofType(await eventsOf(h, id), 'user/message')[0];
  if (!first) throw new Error('no user message');
  return first.seq;
}

/** The child of `parent` with this label. */
export function childNamed(h: Harness, parent: string, label: string): string {
  const c = h.store.children(parent).find((x) => h.store.summaryRef(x.id)?.label === label);
  if (!c) throw new Error(`no child ${label}`);
  return c.id;
}
