/**
 * The remote programs this process has running (`remote/process.ts` tracks each), so a front end
 * that must leave now (a second Ctrl+C, a stop that took too long) can kill them all before it
 * exits: a program in a PID namespace dies with its group's bwrap anyway, one in a bare process
 * group would not. Commands and workflow scripts need no entry: a command dies with its turn's
 * abort, a script process watches its parent and ends itself when it is orphaned.
 */
export interface LiveGroup {
  /** SIGKILL to the whole group (and, through bwrap's death, its namespace). */
  kill(): void;
  /** Whether a process of the group still runs. */
  groupAlive(): boolean;
}

const live = new Set<LiveGroup>();

export function trackGroup(g: LiveGroup): void {
  live.add(g);
}

export function untrackGroup(g: LiveGroup): void {
  live.delete(g);
}

/** How many remote programs still have a process running. */
export function liveGroupCount(): number {
  let n = 0;
  for (const g of live) if (g.groupAlive()) n++;
  return n;
}

/** SIGKILL every remote program's group at once (synchronous: safe right before `process.exit`); returns how many still ran. */
export function killLiveGroups(): number {
  let n = 0;
  for (const g of [...live]) {
    if (!g.groupAlive()) {
      live.delete(g);
      continue;
    }
    g.kill();
    n++;
  }
  return n;
}
