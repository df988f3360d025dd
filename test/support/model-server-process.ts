import { type ChildProcess, fork } from 'node:child_process';
import * as path from 'node:path';
import type { Reply } from './model-server';

/**
 * The test model server (same wire, same replies, same latency) in a child process of its own,
 * for benches that measure how much of one event loop Arbor needs: in process, the server's
 * request parsing, prefix-cache hashing and SSE writing ran on Arbor's loop and counted as its
 * CPU, where a real model runs on another machine (decision 0088). Replies are fixed values
 * (no reply functions cross a process boundary).
 */
export class ModelServerProcess {
  private next = 1;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  private constructor(
    private readonly child: ChildProcess,
    readonly baseURL: string,
  ) {
    child.on('message', (m: { id: number; value?: unknown; error?: string }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.error !== undefined) w?.reject(new Error(`model server process: ${m.error}`));
      else w?.resolve(m.value);
    });
    child.on('exit', (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`the model server process exited (${code})`));
      this.waiting.clear();
    });
  }

  static async start(): Promise<ModelServerProcess> {
    const child = fork(path.join(__dirname, 'model-server-main.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const baseURL = await new Promise<string>((resolve, reject) => {
      child.once('message', (m: { value: string }) => resolve(m.value));
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the model server process exited (${code}) before it listened`)));
    });
    return new ModelServerProcess(child, baseURL);
  }

  private ask<T>(op: string, extra: object = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, op, ...extra });
    });
  }

  /** Every request is answered with `reply` (the in-process server's `setFallback` of a constant). */
  setFallback(reply: Reply): Promise<void> {
    return this.ask('fallback', { reply });
  }
  reset(): Promise<void> {
    return this.ask('reset');
  }
  /** The server process's CPU so far (user + system, ms). */
  async cpuMs(): Promise<number> {
    return (await this.ask<{ cpuMs: number }>('cpu')).cpuMs;
  }
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    await this.ask('stop').catch(() => undefined);
    await exited;
  }
}
