import { Worker } from 'node:worker_threads';

/** Where a regular expression matched: file (index in the batch), line (0-based), column. */
export type LineHit = [file: number, line: number, index: number];

export type BatchOutcome = { kind: 'hits'; hits: LineHit[] } | { kind: 'too-slow' } | { kind: 'cancelled' };

// The worker's whole program, as plain JS (no bundler or transpiler rewrites it): it splits
// each text into lines and runs the pattern on each, returning at most `budget` hits.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.pattern, workerData.flags);
parentPort.on('message', ({ texts, budget }) => {
  const hits = [];
  outer: for (let f = 0; f < texts.length; f++) {
    const lines = texts[f].split(/\\r?\\n/);
    for (let i = 0; i < lines.length; i++) {
      const m = re.exec(lines[i]);
      if (!m) continue;
      hits.push([f, i, m.index]);
      if (hits.length >= budget) break outer;
    }
  }
  parentPort.postMessage(hits);
});
`;

/**
 * Runs a model-supplied regular expression off the main thread. JavaScript's regex engine
 * backtracks, so a pattern like `(a+)+$` can take exponential time on one line, and a
 * running `exec` cannot be interrupted: in a worker it can be (terminate), while the
 * host's event loop goes on. Each batch gets `timeLimitMs`; past it the worker is killed.
 */
export class LineMatcher {
  private worker: Worker | undefined;
  private broken = false;

  constructor(
    private readonly pattern: string,
    private readonly flags: string,
    private readonly timeLimitMs: number,
    private readonly signal: AbortSignal,
  ) {}

  /** Match every line of `texts`, stopping after `budget` hits. */
  match(texts: string[], budget: number): Promise<BatchOutcome> {
    if (this.broken) return Promise.resolve({ kind: 'too-slow' });
    if (this.signal.aborted) return Promise.resolve({ kind: 'cancelled' });
    const worker = (this.worker ??= new Worker(WORKER_SOURCE, { eval: true, workerData: { pattern: this.pattern, flags: this.flags } }));
    return new Promise<BatchOutcome>((resolve, reject) => {
      const done = (outcome: BatchOutcome | Error): void => {
        clearTimeout(timer);
        this.signal.removeEventListener('abort', onAbort);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const kill = (outcome: BatchOutcome | Error): void => {
        this.broken = true;
        this.worker = undefined;
        void worker.terminate();
        done(outcome);
      };
      const onMessage = (hits: LineHit[]): void => done({ kind: 'hits', hits });
      const onError = (err: Error): void => kill(err);
      const onExit = (code: number): void => done(new Error(`the search worker stopped (exit code ${code})`));
      const onAbort = (): void => kill({ kind: 'cancelled' });
      const timer = setTimeout(() => kill({ kind: 'too-slow' }), this.timeLimitMs);
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      this.signal.addEventListener('abort', onAbort, { once: true });
      worker.postMessage({ texts, budget });
    });
  }

  /** Stop the worker (idempotent). */
  close(): void {
    void this.worker?.terminate();
    this.worker = undefined;
  }
}
