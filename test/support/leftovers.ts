import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AcpAgentSettings, ProgramSettings } from '../../src/core/remote/settings';

const LEAVER = path.resolve(__dirname, 'leaver.js');

/** One leaver (test/support/leaver.ts) set up in `dir`: how to run it as codex or as an ACP agent, and how to find what it started. */
export interface Leaver {
  /** In the command line of every process it makes. */
  token: string;
  /** Where it writes `{role, pid}` lines once its sleepers run. */
  file: string;
  codex: ProgramSettings;
  acp: AcpAgentSettings;
}

let n = 0;

export function leaver(dir: string, graceMs = 300): Leaver {
  // A number `sleep` accepts, unique to this run: 3600.<pid><time><n>.
  const token = `3600.${process.pid}${Date.now() % 1e7}${n++}`;
  const file = path.join(dir, `leaver-${n}.pids`);
  const env = { LEAVER_FILE: file, LEAVER_TOKEN: token };
  // codex's command must be an executable file: a shell that execs node on the leaver.
  const launcher = path.join(dir, `leaver-${n}`);
  fs.writeFileSync(launcher, `#!/bin/sh\nexec "${process.execPath}" "${LEAVER}" "${token}" "$@"\n`, { mode: 0o755 });
  return {
    token,
    file,
    codex: { command: launcher, env: { ...env, LEAVER_WIRE: 'codex' }, graceMs },
    acp: { name: 'leaver', command: process.execPath, args: [LEAVER, token], env: { ...env, LEAVER_WIRE: 'acp' }, graceMs },
  };
}

/** Host pids of the processes (zombies left out) whose command line holds `token`. */
export function living(token: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'latin1').includes(token)) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Until the leaver's sleepers run (its file has its three lines); throws after `ms`. */
export async function sleepersRunning(l: Leaver, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    try {
      if (fs.readFileSync(l.file, 'utf8').trim().split('\n').length === 3 && living(`${l.token}2`).length === 1) return;
    } catch {
      /* not yet */
    }
  }
  throw new Error(`the leaver's sleepers did not start within ${ms} ms (${l.file})`);
}

/** Until no process with the token runs; returns what still runs after `ms`. */
export async function goneWithin(token: string, ms = 5000): Promise<number[]> {
  let left = living(token);
  for (const end = Date.now() + ms; left.length && Date.now() < end; left = living(token)) await new Promise((r) => setTimeout(r, 20));
  return left;
}

/** Whatever a failed test left: killed. */
export function killLeftovers(token: string): void {
  for (const pid of living(token))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
}
