import * as fs from 'node:fs';

// Host places a confined command has no business reaching: the user's session folder under
// `/run/user` (the D-Bus session bus, ssh-agent and gpg-agent sockets, a rootless Docker or
// Podman socket, Wayland, PipeWire) and the system-wide sockets of root-equivalent daemons.
// The seccomp filter (`seccomp.ts`) is the boundary: it denies every AF_UNIX socket. These
// mounts are depth, and the only cover on a machine the filter has no build for. `/run` as a
// whole stays visible (read-only): `/etc/resolv.conf` often points into it, and NixOS keeps
// its system profile (`/run/current-system`) there.

const SESSION_FOLDERS = ['/run/user', '/var/run/user'];
const SYSTEM_SOCKETS = [
  '/run/docker.sock',
  '/var/run/docker.sock',
  '/run/podman/podman.sock',
  '/run/containerd/containerd.sock',
  '/run/dbus/system_bus_socket',
  '/var/run/dbus/system_bus_socket',
  '/run/snapd.socket',
];

export interface HostSockets {
  /** Existing session folders (real paths): a tmpfs covers each. */
  hidden: string[];
  /** Existing socket files (real paths): `/dev/null` is bound over each. */
  masked: string[];
}

/** What exists of them on this host now (a few `lstat`s: looked at per command, since a login creates `/run/user/<uid>`). */
export function hostSockets(): HostSockets {
  const hidden = new Set<string>();
  const masked = new Set<string>();
  for (const p of SESSION_FOLDERS) {
    const r = realOf(p);
    if (r?.st.isDirectory()) hidden.add(r.path);
  }
  for (const p of SYSTEM_SOCKETS) {
    const r = realOf(p);
    if (r?.st.isSocket() && ![...hidden].some((h) => r.path.startsWith(`${h}/`))) masked.add(r.path);
  }
  return { hidden: [...hidden].sort(), masked: [...masked].sort() };
}

function realOf(p: string): { path: string; st: fs.Stats } | undefined {
  try {
    const real = fs.realpathSync(p);
    return { path: real, st: fs.statSync(real) };
  } catch {
    return undefined;
  }
}
