import { sendSignal, signalGroup } from './group';
import { descendantsOf, readStat } from './proc-stat';

// What a stopped program started outside its process group (`setsid`, a daemon's double fork):
// named while the program still names them as descendants, each kept with its start time, so a
// pid that died and was handed out again is never signalled (decision 0099). A stray that traps
// SIGTERM is still there when the SIGKILL follow-up comes: it must not be forgotten because the
// group itself is gone.

export class Strays {
  /** pid → start time (clock ticks since boot), as read when it was named. */
  private readonly known = new Map<number, number>();

  /** Name the live descendants of `pid` (undefined: its leader has exited), and of every stray still running (what they started since). */
  collect(pid: number | undefined): void {
    // One read of /proc: the leader's descendants and the live strays' (what they started since).
    const roots = [...this.known.keys()].filter((p) => this.live(p));
    for (const p of descendantsOf(pid === undefined ? roots : [pid, ...roots])) this.add(p);
  }

  /** `sig` to every stray that is still the process it was, and to the group it leads (setsid made one). */
  signal(sig: NodeJS.Signals): void {
    for (const p of this.known.keys()) {
      const s = this.live(p);
      if (!s) continue;
      sendSignal(p, sig);
      if (s.pgrp === p) signalGroup(p, sig);
    }
  }

  /**
   * SIGKILL to group `pgid` (undefined: gone, never signalled again) and every stray, frozen first:
   * a member that forks, or leaves the group (`setsid`), between the naming and the kill would
   * otherwise escape both. The group and the strays get SIGSTOP, the strays are named again (what
   * they started before they stopped), then everything gets SIGKILL. `leader`: whose descendants
   * to name (the group's leader while it runs; undefined once it exited, its pid may be reused).
   */
  killFrozen(pgid: number | undefined, leader: number | undefined): void {
    if (pgid !== undefined) signalGroup(pgid, 'SIGSTOP');
    this.collect(leader);
    this.signal('SIGSTOP');
    this.collect(leader);
    if (pgid !== undefined) signalGroup(pgid, 'SIGKILL');
    this.signal('SIGKILL');
  }

  /** Whether a stray still runs (not a zombie, same start time). */
  alive(): boolean {
    for (const p of this.known.keys()) if (this.live(p)) return true;
    return false;
  }

  private add(p: number): void {
    if (this.known.has(p)) return;
    const s = readStat(p);
    if (s && s.state !== 'Z') this.known.set(p, s.startTime);
  }

  private live(p: number) {
    const s = readStat(p);
    return s && s.state !== 'Z' && s.startTime === this.known.get(p) ? s : undefined;
  }
}

/**
 * SIGKILL a running program's group and what it started outside it (`setsid`), named before the
 * group dies (once it has, they are orphans nobody can name): a lost spawner's programs, and what
 * the spawner still runs when its host is gone (decision 0095). The strays are the `Strays` a
 * stopped command keeps (a reused pid is never signalled; a stray's own group goes with it). A
 * daemon's double fork that completed before the freeze is reparented and out of reach: only a
 * PID namespace (the sandbox's) holds those.
 */
export function killGroupAndStrays(pid: number): void {
  new Strays().killFrozen(pid, pid);
}
