import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RemoteProcess } from '../../../src/core/remote/process';

// Shared by the placement tests: a real git repository with committed, changed, untracked,
// ignored and store files, and the few /proc readings the secrets tests make.

export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
  });
}

/**
 * `<base>/ws`: committed `a.txt`, `keep.txt`, `gone.txt` and `.gitignore` (ignores `*.log`); then,
 * uncommitted, `a.txt` changed, `new.txt` untracked, `debug.log` ignored and the store
 * `.arbor/store/sessions.db`. Returns the real path.
 */
export function makeRepo(base: string): string {
  const ws = path.join(base, 'ws');
  fs.mkdirSync(ws, { recursive: true });
  gitIn(ws, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(ws, 'a.txt'), 'one\n');
  fs.writeFileSync(path.join(ws, 'keep.txt'), 'keep\n');
  fs.writeFileSync(path.join(ws, 'gone.txt'), 'to be deleted there\n');
  fs.writeFileSync(path.join(ws, '.gitignore'), '*.log\n');
  gitIn(ws, 'add', '-A');
  gitIn(ws, 'commit', '-qm', 'first');
  fs.writeFileSync(path.join(ws, 'a.txt'), 'one, changed here\n');
  fs.writeFileSync(path.join(ws, 'new.txt'), 'untracked here\n');
  fs.writeFileSync(path.join(ws, 'debug.log'), 'ignored\n');
  fs.mkdirSync(path.join(ws, '.arbor', 'store'), { recursive: true });
  fs.writeFileSync(path.join(ws, '.arbor', 'store', 'sessions.db'), 'the log stays at home\n');
  return fs.realpathSync(ws);
}

/** Files under `dir` (relative, sorted), `.git` left out. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

/** The command lines of every process on this machine (the sshd's sessions run here too), with their pids. */
export function commandLines(): { pid: number; args: string }[] {
  const out: { pid: number; args: string }[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      out.push({ pid: Number(name), args: fs.readFileSync(`/proc/${name}/cmdline`, 'latin1').replace(/\0/g, ' ') });
    } catch {
      // gone
    }
  }
  return out;
}

export function environOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return '';
  }
}

/** Every file under `dir` whose bytes contain `needle`. */
export function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.readFileSync(p).includes(needle)) hits.push(p);
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return hits;
}

/** Send ACP `initialize` and return the answer's `result` (the first line with id 1). */
export async function acpInitialize(proc: RemoteProcess, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  proc.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }));
  const timer = setTimeout(() => proc.kill(), timeoutMs);
  try {
    for await (const line of proc.lines()) {
      if (!('text' in line)) continue;
      const msg = JSON.parse(line.text) as { id?: number; result?: Record<string, unknown>; error?: unknown };
      if (msg.id === 1) {
        if (!msg.result) throw new Error(`initialize failed: ${JSON.stringify(msg.error)}`);
        return msg.result;
      }
    }
  } finally {
    clearTimeout(timer);
  }
  throw new Error(`arbor acp closed before answering initialize: ${proc.stderrTail}`);
}
