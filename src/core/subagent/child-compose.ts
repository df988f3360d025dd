import type { SessionHeader } from '../session/events';
import { type ChildComposition, ownScopeOf } from './composition';
import { escalatingPort } from './escalate';
import type { FanoutLimiter } from './fanout';
import type { Gates, StartGate } from './gates';
import type { Mode, RuntimeDeps } from './runtime-deps';
import type { SubagentControl } from './surface';
import { createReportTool } from './tools/report-tool';
import { createSubmitResultTool } from './tools/submit-result-tool';
import type { SubagentProvider, SubagentRequest } from './types';

/** What composing a child reads of its runtime (handed in, so this file never imports the runtime). */
export interface ComposeContext {
  readonly deps: RuntimeDeps;
  /** The runtime's providers by name (a live map: a provider registered later is seen). */
  readonly providers: ReadonlyMap<string, SubagentProvider>;
  readonly fanout: FanoutLimiter;
  /** Children waiting at a caller's gate (a workflow run's slots) before their fan-out slot. */
  readonly gates: Gates;
  /** The runtime as its tools see it: the `report` tool's, and the lineage an escalation is tagged with. */
  readonly control: SubagentControl;
}

/** The composition of a child, from its request (start) or its own log (cold resume). */
export function childComposition(
  ctx: ComposeContext,
  header: SessionHeader,
  request: Pick<SubagentRequest, 'toolFilter' | 'persona' | 'model' | 'maxTokens'> & { provider?: string },
  escalate: boolean,
  roots?: readonly string[],
  gate?: StartGate,
): ChildComposition {
  const remote = request.provider !== undefined ? ctx.providers.get(request.provider)?.remote : undefined;
  return {
    ...(remote ? { remote } : {}),
    ...(roots ? { roots } : {}),
    ...(header.agentPreset ? { preset: header.agentPreset } : {}),
    ownScope: ownScopeOf(header.id),
    admission: gate ? ctx.gates.chain(header.id, gate, ctx.fanout.admission(header.id)) : ctx.fanout.admission(header.id),
    ...(request.toolFilter ? { toolFilter: request.toolFilter } : {}),
    ...(request.persona ? { persona: request.persona } : {}),
    ...(request.model ? { model: request.model } : {}),
    ...(request.maxTokens ? { maxTokens: request.maxTokens } : {}),
    // From the header, not the store: at start the child is not published yet.
    ...(escalate && ctx.deps.approvalPort
      ? {
          approval: escalatingPort(
            ctx.deps.approvalPort,
            [header.id, ...(header.parentSession ? ctx.control.lineage(header.parentSession) : [])],
            ctx.deps.escalateTimeoutMs ?? 300_000,
          ),
        }
      : {}),
  };
}

/** Child-local tools live in the child's own scope: never removed by its filter, gone with it. */
export function registerLocalTools(
  ctx: ComposeContext,
  childId: string,
  mode: Mode,
  request: Pick<SubagentRequest, 'outputSchema'>,
  onOutput?: (v: unknown) => void,
): () => void {
  const scope = ownScopeOf(childId);
  if (mode === 'continuable') ctx.deps.tools.register(createReportTool(ctx.control), scope);
  if (request.outputSchema)
    ctx.deps.tools.register(
      createSubmitResultTool(request.outputSchema, (v) => onOutput?.(v)),
      scope,
    );
  return () => ctx.deps.tools.dropScope(scope);
}
