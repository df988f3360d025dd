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
  // Frozen first: a member that forks, or leaves the group (`setsid`), between the naming and the
  // kill would otherwise escape both. Stopped, each is named by its parent, then killed.
  signalGroup(pid, 'SIGSTOP');
  const strays = new Strays();
  strays.collect(pid);
  strays.signal('SIGSTOP');
  strays.collect(pid); // what the strays started before they stopped
  signalGroup(pid, 'SIGKILL');
  strays.signal('SIGKILL');
}
