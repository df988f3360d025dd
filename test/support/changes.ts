import type { ToolProgress } from '../../src/core/agent/config';
import type { Harness } from '../../src/core/harness';
import type { SessionEvent } from '../../src/core/session/events';

// Filters over the harness's one change stream (`Harness.observe`, decision 0054), for tests
// that follow one kind of change.

export function onEvents(h: Harness, fn: (sessionId: string, e: SessionEvent) => void): () => void {
  return h.observe((c) => {
    if (c.type === 'event') fn(c.sessionId, c.event);
  });
}

export function onDeltas(h: Harness, fn: (sessionId: string, kind: 'text' | 'reasoning', text: string) => void): () => void {
  return h.observe((c) => {
    if (c.type === 'delta') fn(c.sessionId, c.kind, c.text);
  });
}

export function onProgress(h: Harness, fn: (sessionId: string, p: ToolProgress) => void): () => void {
  return h.observe((c) => {
    if (c.type === 'progress') fn(c.sessionId, c.progress);
  });
}
