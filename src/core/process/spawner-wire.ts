// The messages between the host and its spawner process (`spawner.ts`, `spawner-child.ts`;
// decision 0095), over a Node IPC channel with `advanced` serialization (bytes travel as bytes).
// Each program is named by an id the host chose.

export type ToSpawner =
  | {
      op: 'spawn';
      id: number;
      file: string;
      args: string[];
      cwd: string;
      env: NodeJS.ProcessEnv;
      /** Written to the program's stdin, then closed; absent: stdin is closed from the start. */
      stdin?: Uint8Array;
      /** Written to a pipe on the program's fd 3, then closed (bubblewrap's `--seccomp 3`). */
      fd3?: Uint8Array;
    }
  /** The host stopped reading the program's output: the spawner stops too. */
  | { op: 'release'; id: number };

export type FromSpawner =
  /** The spawner runs and takes programs. */
  | { op: 'ready' }
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'data'; id: number; fd: 1 | 2; data: Uint8Array }
  /** The program could not start (or its stdio failed): `code` as Node's (ENOENT, EACCES…). */
  | { op: 'error'; id: number; message: string; code?: string }
  | { op: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  /** Its output is all sent; nothing more comes for this id. */
  | { op: 'close'; id: number };
