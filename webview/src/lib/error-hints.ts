// What to do about a failed request, by its error's code (`request/done` ok:false carries the
// code of a HarnessError, StoreError, GoalError, InboxError, SubagentError, WorkflowError).
// Only codes a panel action can meet and a person can act on; the error's own words come first.

const HINTS: Readonly<Record<string, string>> = {
  // the store
  LOCKED: "Another VS Code window or an `arbor` command is using this workspace's sessions: close it, then try again.",
  CLOSED: 'Arbor is closing: reload the window to use it again.',
  UNKNOWN_SESSION: 'The session is gone (deleted in another window?): pick one in the tree.',
  IO: "Arbor could not write its sessions: check the free disk space and the folder's permissions.",
  // goals
  ROUNDS_EXHAUSTED: 'Raise the round limit in the goal bar, then resume.',
  NOT_ROOT: 'Goals belong to the conversations you start: set it on one of those.',
  BAD_PHASE: "The goal changed meanwhile: use the goal bar's buttons as they are now.",
  NO_GOAL: "Set a goal first (the tree's menu: Set Goal).",
  // queued messages
  ALREADY_CLAIMED: 'It has started running already: use Stop to interrupt it.',
  NOT_WAITING: 'Nothing is waiting: queued messages run by themselves.',
  // the panel's selection moved while a message was on its way (decision 0120)
  SELECTION_CHANGED: 'Check the conversation now shown is the one you mean, then send again.',
  // subagents and workflows
  NOT_CONTINUABLE: 'A one-shot subagent takes no more messages: ask its parent instead.',
  NOT_LIVE: 'The workflow run has already ended.',
};

/** What to do about an error with this code, if the panel knows. */
export function hintFor(code: string | undefined): string | undefined {
  return code !== undefined && Object.hasOwn(HINTS, code) ? HINTS[code] : undefined;
}
