import * as fs from 'node:fs';

// Workflow script processes (src/core/workflow/isolate.ts) this test process started and did not
// end: a run's, or the spare an engine keeps for its next run (decision 0096) until it is closed.
// A spare never keeps the runner alive, so an engine a test forgot to close shows only here.

/** A script process: its host pid, its parent's, and its command line (bubblewrap's or Node's). */
export interface ScriptProcess {
  pid: number;
  ppid: number;
  cmd: string;
}

/** What marks a script process in its command line: its entry (out/ under tsc, dist/ bundled). */
const ENTRY = 'workflow-child';

/**
 * The script processes under `root` (at any depth: one a child CLI started counts too), zombies
 * left out; only the outermost of each (bubblewrap's, not the Node inside it).
 */
export function liveScriptProcesses(root = process.pid): ScriptProcess[] {
  if (process.platform !== 'linux') return []; // read from /proc: Linux only
  const parent = new Map<number, number>();
  const cmd = new Map<number, string>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'latin1');
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z') continue;
      parent.set(Number(d), Number(ppid));
      cmd.set(Number(d), fs.readFileSync(`/proc/${d}/cmdline`, 'latin1').replace(/\0/g, ' ').trim());
    } catch {
      /* gone */
    }
  }
  const isScript = (pid: number) => cmd.get(pid)?.includes(ENTRY) ?? false;
  const under = (pid: number): boolean => {
    for (let p = parent.get(pid), hops = 0; p !== undefined && p > 0 && hops < 64; p = parent.get(p), hops++) if (p === root) return true;
    return false;
  };
  const out: ScriptProcess[] = [];
  for (const [pid, ppid] of parent) if (pid !== root && isScript(pid) && !isScript(ppid) && under(pid)) out.push({ pid, ppid, cmd: cmd.get(pid) ?? '' });
  return out;
}

/** The script processes still under `root` after waiting up to `ms` for them to go (a closing engine's spare takes a moment). */
export async function scriptProcessesLeft(ms = 2000, root = process.pid): Promise<ScriptProcess[]> {
  let left = liveScriptProcesses(root);
  for (const end = Date.now() + ms; left.length && Date.now() < end; left = liveScriptProcesses(root)) await new Promise((r) => setTimeout(r, 50));
  return left;
}

/** One line per process for a failure message: pid and the end of its command line (the entry it runs). */
export function describeScriptProcesses(ps: readonly ScriptProcess[]): string {
  return ps.map((p) => `  pid ${p.pid} (parent ${p.ppid}): …${p.cmd.slice(-160)}`).join('\n');
}
