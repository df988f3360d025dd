import type * as acp from '@agentclientprotocol/sdk/unstable';
import type { ApprovalPort } from '../policy/approval';
import type { ApprovalPolicy } from '../session/events';

/**
 * An ACP agent's `session/request_permission`, answered so permissions never widen
 * (decision 0040): under approval `never` (or with nobody to ask) the `reject_once` option;
 * under `ask` (the opt-in `escalate` child policy) the human decides through the escalating
 * port (child lineage shown, a timeout that denies) and the answer is `allow_once` or
 * `reject_once` — never `allow_always`, so nothing outlives the one call; after a cancel,
 * `cancelled`. An agent that offers no once-option gets the narrowest one it offers.
 */
export interface PermissionContext {
  childId: string;
  approvalPolicy: ApprovalPolicy;
  approval?: ApprovalPort;
  /** The child's turn is being stopped: every question still open is answered `cancelled`. */
  signal: AbortSignal;
  /** The agent's name, for the human ("acp:claude asks…"). */
  program: string;
}

/** Option kinds in the order each answer takes them: a rejection may be wider in scope, an allow never. */
const REJECT: readonly acp.PermissionOptionKind[] = ['reject_once', 'reject_always'];
const ALLOW: readonly acp.PermissionOptionKind[] = ['allow_once'];

const cancelled = (): acp.RequestPermissionResponse => ({ outcome: { outcome: 'cancelled' } });

function pick(options: readonly acp.PermissionOption[], kinds: readonly acp.PermissionOptionKind[]): acp.RequestPermissionResponse | undefined {
  for (const kind of kinds) {
    // Codex's adapter may offer "decline" (go on without it) beside "cancel" (end the turn): the turn goes on.
    const o = options.find((x) => x.kind === kind && x.optionId === 'decline') ?? options.find((x) => x.kind === kind);
    if (o) return { outcome: { outcome: 'selected', optionId: o.optionId } };
  }
  return undefined;
}

/** No rejection offered: `cancelled` is the one answer that allows nothing. */
const reject = (options: readonly acp.PermissionOption[]) => pick(options, REJECT) ?? cancelled();

/** One line a human can judge: the call's title, then what it would run or touch. */
export function summaryOf(tc: acp.ToolCallUpdate): string {
  const raw = tc.rawInput && typeof tc.rawInput === 'object' ? (tc.rawInput as Record<string, unknown>) : {};
  const detail = ['command', 'cmd', 'path', 'file_path', 'url'].map((k) => raw[k]).find((v) => typeof v === 'string' || Array.isArray(v));
  const where = tc.locations?.map((l) => l.path).join(', ');
  const what = Array.isArray(detail) ? detail.join(' ') : (detail as string | undefined);
  return [tc.title ?? tc.kind ?? 'a tool call', what ?? where].filter(Boolean).join(': ');
}

/**
 * The answer, and why nothing was allowed when nothing was (the outcome a built-in tool's
 * refusal carries, decision 0015: `policy-never`, `no-port`, `denied`, `port-failed`,
 * `aborted`, or `no-allow-once` when the human allowed but the agent offered no once-option).
 */
export interface PermissionAnswer {
  response: acp.RequestPermissionResponse;
  refusal?: string;
}

export async function answerPermission(req: acp.RequestPermissionRequest, ctx: PermissionContext): Promise<PermissionAnswer> {
  const no = (refusal: string, response: acp.RequestPermissionResponse = reject(req.options)): PermissionAnswer => ({ response, refusal });
  if (ctx.signal.aborted) return no('aborted', cancelled());
  if (ctx.approvalPolicy !== 'ask') return no('policy-never');
  if (!ctx.approval) return no('no-port');
  const tc = req.toolCall;
  let allowed: boolean;
  let failed = false;
  // A stop answers at once (`cancelled`), whether or not the port heeds the signal.
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<'deny'>((resolve) => {
    onAbort = () => resolve('deny');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const asked = ctx.approval.ask(
      {
        sessionId: ctx.childId,
        tool: `acp:${tc.kind ?? 'other'}`,
        summary: summaryOf(tc),
        reason: `${ctx.program} asks before it acts; allowing answers this one call only (allow_once).`,
        callId: tc.toolCallId,
        // ACP's answer is an option id: the agent never hears why.
        reasonHeard: false,
        noGrant: `Only once: ${ctx.program} asks before each of its actions, and Arbor answers it one call at a time.`,
      },
      ctx.signal,
    );
    const answer = await Promise.race([asked, stopped]);
    allowed = (typeof answer === 'string' ? answer : answer.decision) === 'allow';
  } catch {
    allowed = false; // a port that fails denies
    failed = true;
  } finally {
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
  }
  if (ctx.signal.aborted) return no('aborted', cancelled());
  if (!allowed) return no(failed ? 'port-failed' : 'denied');
  const once = pick(req.options, ALLOW);
  return once ? { response: once } : no('no-allow-once');
}
