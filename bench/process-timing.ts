import { spawn } from 'node:child_process';
import { now } from './support';

/** What one whole process run took and printed: spawn to exit, every output byte read. */
export interface ProcessRun {
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program as a user would, from spawn to exit with its output read to the end: stdin
 * closed (a pipe makes some programs wait for input), its own process group.
 */
export function timeProcess(file: string, args: readonly string[], opts: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const t0 = now();
    const child = spawn(file, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: now() - t0, code, stdout, stderr }));
  });
}

/** The last line of a failed run's stderr (or stdout), for a one-line reason. */
export function lastLine(r: ProcessRun): string {
  const lines = `${r.stderr}\n${r.stdout}`.split('\n').filter((l) => l.trim());
  return `exit ${r.code}${lines.length ? `: ${lines[lines.length - 1].trim().slice(0, 200)}` : ''}`;
}
