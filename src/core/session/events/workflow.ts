import type { Budget } from '../budget';
import type { Base } from './base';
import type { StopReason } from './turn';

// Observe-only workflow progress (start, phase, log, agent, end). Not model history.

export type WorkflowEventType = 'workflow/start' | 'workflow/phase' | 'workflow/log' | 'workflow/agent' | 'workflow/end';

/** How a workflow run ended: its script returned, failed (a code says why), was cancelled by a human, or was cut by an interrupt / close / crash. */
export type WorkflowStatus = 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** `data` of each `workflow/*` type (validated at append: a script that escapes its sandbox can post anything). */
export interface WorkflowData {
  'workflow/start': {
    callId?: string;
    name: string;
    description: string;
    scriptSha256: string;
    scriptBytes: number;
    limits: { maxTotalAgents: number; concurrency: number; wallClockMs: number };
    /** The run's own budget, when the call gave one. */
    budget?: Budget;
  };
  'workflow/phase': { index: number; title: string };
  'workflow/log': { message: string; truncated?: boolean };
  'workflow/agent': { index: number; childId: string; label?: string; status: 'started' | 'done'; stopReason?: StopReason };
  'workflow/end': { status: WorkflowStatus; code?: string; error?: string; agents: number; tokens: number; resultBytes: number; logsDropped: number };
}

export interface WorkflowEvent extends Base<WorkflowEventType> {
  runId: string;
  data?: Record<string, unknown>;
}
