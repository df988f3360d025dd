import { DEFAULT_ISOLATE, type IsolateLimits } from './isolate';

/** A deployment's workflow limits (settings `arbor.workflow.*`); the model may lower some, never raise them. */
export interface WorkflowDeployment {
  /** Ceiling of `agent()` calls per run (issue 12: 1000). */
  maxTotalAgents: number;
  /** Concurrency when the call names none, and the most it may ask for. */
  concurrency: number;
  maxConcurrency: number;
  /** Wall clock of a run: a host timer that ends the script process (WALL_CLOCK). */
  wallClockMs: number;
  /** `log()` and `phase()` events kept per run; the rest are counted in `logsDropped`. */
  maxLogEvents: number;
  maxPhases: number;
  /** Bytes of one log message (longer ones are cut and marked `truncated`). */
  maxLogBytes: number;
  maxScriptBytes: number;
  maxResultBytes: number;
  isolate: IsolateLimits;
  /** bubblewrap for the script process (default: `bwrap` on PATH); the commands' `bwrapPath`. */
  bwrapPath?: string;
  /**
   * Run scripts unconfined (a plain child process) where no OS sandbox can start. Off by
   * default: without a sandbox the `workflow` tool refuses (NO_SANDBOX). Only the user sets it
   * (`arbor.workflow.allowUnconfinedScripts`, machine-scoped; `arbor run --unconfined-workflows`).
   */
  allowUnconfined: boolean;
}

export const DEFAULT_DEPLOYMENT: WorkflowDeployment = {
  maxTotalAgents: 1000,
  concurrency: 4,
  maxConcurrency: 16,
  wallClockMs: 30 * 60_000,
  maxLogEvents: 1000,
  maxPhases: 200,
  maxLogBytes: 2048,
  maxScriptBytes: 256 * 1024,
  maxResultBytes: 256 * 1024,
  isolate: DEFAULT_ISOLATE,
  allowUnconfined: false,
};

/** What one run gets: the deployment's limits, lowered where the call asked. */
export interface RunLimits {
  maxTotalAgents: number;
  concurrency: number;
  wallClockMs: number;
}

export function runLimits(d: WorkflowDeployment, asked: { maxTotalAgents?: number; concurrency?: number }): RunLimits {
  return {
    maxTotalAgents: Math.min(asked.maxTotalAgents ?? d.maxTotalAgents, d.maxTotalAgents),
    concurrency: Math.min(asked.concurrency ?? d.concurrency, d.maxConcurrency),
    wallClockMs: d.wallClockMs,
  };
}
