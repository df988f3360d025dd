import type { Base } from './base';

// What a child is: its descriptor (where it runs included), its remote program, the end of a fork's seed. Not model history.

export interface SubagentDescriptorEvent extends Base<'subagent/descriptor'> {
  version: 2;
  mode: 'one-shot' | 'continuable';
  provider: string;
  label?: string;
  modelProvider?: string;
  model?: string;
  persona?: string;
  /** The persona is the whole system prompt. */
  personaComplete?: boolean;
  toolFilter?: string[];
  /** The agent file it was started from (its name; persona, tools and model above are the file's, as read then). */
  agent?: string;
  /** The child is agent number `index` of workflow run `runId` in its parent's log (the tree puts it under the run). */
  workflow?: { runId: string; index: number };
  /** The child was started in its own git worktree (decision 0060); its `worktree` event says where. */
  isolation?: 'worktree';
  /** Where the child runs when it is placed on another host or in a container (issue 26, decision 0074). */
  placement?: NodePlacement;
}

/**
 * Where a placed node runs (decision 0074), as its descriptor records it: the placement's name,
 * its kind, `user@host:port` or the image, and the round trip of the check made at its start.
 * (The same shape as the placement layer's `PlacementInfo`, declared here: the log knows no transport.)
 */
export interface NodePlacement {
  name: string;
  kind: 'local' | 'ssh' | 'container';
  where: string;
  rttMs?: number;
}

/**
 * A remote child's other program (issue 13, decision 0035): which program ran its turn, the
 * program's own session id (to find its transcript, or resume it later) and the process
 * group it ran in (so a reaper can end it after a host crash). Not model history.
 */
export interface SubagentRemoteEvent extends Base<'subagent/remote'> {
  program: string;
  version?: string;
  externalId: string;
  /** The process group (= the leader's pid) the program runs in, while it runs. */
  pgid?: number;
  /**
   * The leader's start time (clock ticks after boot, /proc/<pid>/stat field 22) and the boot's
   * id: with them the reaper tells this group from a later one that reused the number. Absent
   * in logs written before they were recorded.
   */
  startTime?: number;
  bootId?: string;
  /** The program's own store (another Arbor's), when it has one. */
  store?: string;
  /**
   * Set on a mirror (decision 0041): a sub-session the program of this remote child announced
   * (ACP `subagent_update`), shown in the tree. Arbor runs nothing in it: read-only.
   */
  announcedBy?: string;
}

export interface EndSeedEvent extends Base<'session/end-seed'> {
  seedLength: number;
  /**
   * Inbox messages the parent had accepted but not claimed when the seed was cut: they are
   * the parent's queue, never the fork's (seed 000 §三), so the fork's inbox starts empty.
   * Absent in forks written before this rule (their inbox kept the parent's queue).
   */
  droppedInbox?: string[];
}
