import { createHash } from 'node:crypto';
import * as vm from 'node:vm';
import { describeError } from '../errors';
import type { SubagentRequest } from '../subagent/types';
import { WorkflowError } from './errors';
import type { WorkflowDeployment } from './limits';

/** What the `workflow` tool (or a host) asks for. */
export interface WorkflowInput {
  script: string;
  meta: { name: string; description: string };
  args?: unknown;
  maxTotalAgents?: number;
  concurrency?: number;
  /** The run's own budget: its agents together may spend at most this (and never more than the parent has left). */
  budget?: unknown;
}

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/** Plain JSON only: what can cross to the script process unchanged. */
export function isJson(v: unknown, depth = 0): boolean {
  if (depth > 100) return false;
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every((x) => isJson(x, depth + 1));
  if (isPlain(v)) return Object.values(v).every((x) => isJson(x, depth + 1));
  return false;
}

const positiveInt = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;

/**
 * Every check before anything starts, ending with the compile in the host: a syntax error
 * is `SCRIPT_PARSE` with the script's own line, and no process is started.
 */
export function checkInput(input: WorkflowInput, d: WorkflowDeployment): { sha256: string; bytes: number } {
  const bad = (m: string): never => {
    throw new WorkflowError('BAD_INPUT', m);
  };
  if (typeof input.script !== 'string' || input.script.trim() === '') bad('The script is empty: write plain JavaScript that ends with `return <json>`.');
  const bytes = Buffer.byteLength(input.script, 'utf8');
  if (bytes > d.maxScriptBytes)
    bad(`The script is ${bytes} bytes; the limit is ${d.maxScriptBytes}. Keep the script short: put data in args or let the agents read files.`);
  if (!isPlain(input.meta) || typeof input.meta.name !== 'string' || input.meta.name.trim() === '' || typeof input.meta.description !== 'string')
    bad('meta must be {name: a non-empty string, description: a string}.');
  if (input.args !== undefined && !isJson(input.args)) bad('args must be plain JSON (objects, arrays, strings, finite numbers, booleans, null).');
  if (input.maxTotalAgents !== undefined && !positiveInt(input.maxTotalAgents)) bad('maxTotalAgents must be a positive integer.');
  if (input.concurrency !== undefined && !positiveInt(input.concurrency)) bad('concurrency must be a positive integer.');
  try {
    new vm.Script(`(async function () {\n${input.script}\n})()`, { filename: 'workflow.js' });
  } catch (err) {
    const m = /workflow\.js:(\d+)/.exec(String((err as Error)?.stack ?? ''));
    const line = m ? Math.max(1, Number(m[1]) - 1) : undefined;
    throw new WorkflowError('SCRIPT_PARSE', `The script does not parse${line ? ` (line ${line})` : ''}: ${describeError(err)}`, line);
  }
  return { sha256: createHash('sha256').update(input.script).digest('hex'), bytes };
}

const OPTS = ['label', 'schema', 'tools', 'persona', 'provider', 'isolation', 'placement'];

/** `agent(prompt, opts)` as a subagent request (checked in the host: the script may send anything). */
export function agentRequest(prompt: unknown, opts: unknown): { provider?: string; request: SubagentRequest } {
  const bad = (m: string): never => {
    throw new WorkflowError('BAD_AGENT_REQUEST', `agent(prompt, opts): ${m}`);
  };
  if (typeof prompt !== 'string' || prompt.trim() === '') bad('prompt must be a non-empty string.');
  if (!isPlain(opts)) bad('opts must be an object.');
  const o = opts as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !OPTS.includes(k));
  if (unknown.length) bad(`unknown option${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; known: ${OPTS.join(', ')}.`);
  const request: SubagentRequest = { prompt: prompt as string };
  if (o.label !== undefined) request.label = typeof o.label === 'string' ? o.label.slice(0, 80) : bad('opts.label must be a string.');
  if (o.schema !== undefined)
    request.outputSchema = isPlain(o.schema) ? (o.schema as SubagentRequest['outputSchema']) : bad('opts.schema must be a JSON schema object.');
  if (o.tools !== undefined)
    request.toolFilter =
      Array.isArray(o.tools) && o.tools.every((t) => typeof t === 'string') ? (o.tools as string[]) : bad('opts.tools must be an array of tool names.');
  if (o.persona !== undefined) request.persona = typeof o.persona === 'string' ? { text: o.persona } : bad('opts.persona must be a string.');
  if (o.isolation !== undefined) request.isolation = o.isolation === 'worktree' ? 'worktree' : bad('opts.isolation must be "worktree".');
  // A configured placement's name (decision 0074); the runtime refuses an unknown one (UNKNOWN_PLACEMENT).
  if (o.placement !== undefined)
    request.placement = typeof o.placement === 'string' && o.placement !== '' ? o.placement : bad('opts.placement must be the name of a configured placement.');
  if (o.provider !== undefined && typeof o.provider !== 'string') bad('opts.provider must be a provider name (spawn or fork).');
  return { ...(typeof o.provider === 'string' ? { provider: o.provider } : {}), request };
}
