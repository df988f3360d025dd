import { shq } from './shell';
import type { PlacementSettings } from './types';

// The one ssh command line of a placement (decision 0071), used for its own connections and,
// as GIT_SSH_COMMAND, for git's: the system `ssh` with the user's own config and agent, never a
// prompt (`-T -o BatchMode=yes`, first, so no option given later can turn them off), the
// placement's options, then Arbor's defaults (ssh keeps the first value it reads for an option,
// so the user's own `-o` win over these).

const DEFAULTS = ['ConnectTimeout=15', 'ServerAliveInterval=15', 'ServerAliveCountMax=4', 'LogLevel=ERROR'];

/** Everything before the host. */
export function sshArgs(s: PlacementSettings): string[] {
  return [
    '-T',
    '-o',
    'BatchMode=yes',
    ...(s.sshOptions ?? []).flatMap((o) => ['-o', o]),
    ...DEFAULTS.flatMap((o) => ['-o', o]),
    ...(s.port ? ['-p', String(s.port)] : []),
    ...(s.user ? ['-l', s.user] : []),
    ...(s.identityFile ? ['-i', s.identityFile] : []),
  ];
}

/** `GIT_SSH_COMMAND`: the same ssh, as the shell git runs it through reads it. */
export function gitSshCommand(s: PlacementSettings): string {
  return ['ssh', ...sshArgs(s)].map(shq).join(' ');
}

/** `user@host:port` as a node shows it (what was configured; the ssh config may say more). */
export function sshWhere(s: PlacementSettings): string {
  return `${s.user ? `${s.user}@` : ''}${s.host}${s.port ? `:${s.port}` : ''}`;
}

/** git's scp-like address of a folder on the host (the user and port come from GIT_SSH_COMMAND). */
export function gitUrl(s: PlacementSettings, dir: string): string {
  const host = s.host!.includes(':') ? `[${s.host}]` : s.host!;
  return `${host}:${dir}`;
}
