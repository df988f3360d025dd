import type * as acp from '@agentclientprotocol/sdk/unstable';
import type { ApprovalPort } from '../policy/approval';
import { beyondCeiling, type PolicyCeiling } from '../policy/sandbox';
import type { ApprovalPolicy, SandboxMode } from '../session/events';
import { cutOf, REMOTE_BOUNDS } from '../subagent/remote-bounds';

/**
 * An ACP agent's `session/request_permission`, answered so permissions never widen
 * (decision 0040): under approval `never` (or with nobody to ask) the `reject_once` option;
 * under `ask` (the opt-in `escalate` child policy) the human decides through the escalating
 * port (child lineage shown, a timeout that denies) and the answer is `allow_once` or
 * `reject_once` — never `allow_always`, so nothing outlives the one call; after a cancel,
 * `cancelled`. Under a deployment ceiling (an explicit CLI `--sandbox`, Restricted Mode) the
 * rejection, unasked (`ceiling`, decision 0125 amended in s60). An agent that offers no once-option gets the narrowest one it offers.
 */
export interface PermissionContext {
  childId: string;
  approvalPolicy: ApprovalPolicy;
  approval?: ApprovalPort;
  /** The child's turn is being stopped: every question still open is answered `cancelled`. */
  signal: AbortSignal;
  /** The agent's name, for the human ("acp:claude asks…"). */
  program: string;
  /** The child's line of questions to the human (one per turn): one asked at a time, a flood refused. */
  line?: QuestionLine;
  /** The child's sandbox: what it rules out is refused without asking (`beyondSandbox`). */
  sandbox?: SandboxMode;
  /** The deployment's ceiling (decision 0125, amended in s60): under one narrower than full-access nothing is asked. */
  ceiling?: PolicyCeiling;
}

/** What the agent says its call does to files (ACP tool kinds): nothing of it in `read-only`. */
const WRITES: readonly string[] = ['edit', 'delete', 'move'];

/**
 * Why a question is refused without putting it to the human, or undefined: the child's sandbox
 * rules out what it asks whatever the answer, as it does for Arbor's own tools (a read-only
 * child writes nothing; decision 0040) — a write in `read-only`, and leaving the mode Arbor set
 * for the sandbox (`switch_mode`: Claude's adapter asks so to leave plan mode for a wider one).
 */
export function beyondSandbox(kind: string | null | undefined, sandbox: SandboxMode | undefined): string | undefined {
  if (kind === 'switch_mode') return 'mode-fixed';
  if (sandbox === 'read-only' && kind && WRITES.includes(kind)) return 'read-only';
  return undefined;
}

/**
 * A child's questions to the human, one at a time (decision 0044): an agent may send any number
 * of permission requests at once, each holding what it carries until it is answered, and the
 * human is shown one card per question. At most REMOTE_BOUNDS.questions are open (one asked, the
 * rest waiting their turn); past that a question is refused at once (`too-many-questions`).
 */
export class QuestionLine {
  private last: Promise<unknown> = Promise.resolve();
  private size = 0;

  /** `ask` once every question before it is answered; undefined (nothing asked) when the line is full. */
  async take<T>(ask: () => Promise<T>): Promise<T | undefined> {
    if (this.size >= REMOTE_BOUNDS.questions) return undefined;
    this.size++;
    const mine = this.last.then(ask);
    this.last = mine.catch(() => undefined);
    try {
      return await mine;
    } finally {
      this.size--;
    }
  }
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
  const whole = [tc.title ?? tc.kind ?? 'a tool call', what ?? where].filter(Boolean).join(': ');
  // A line for a human (decision 0044): the agent names it, so it is cut (never half a surrogate pair).
  if (whole.length <= REMOTE_BOUNDS.questionChars) return whole;
  const head = cutOf(whole, REMOTE_BOUNDS.questionChars - 1);
  return `${/[\ud800-\udbff]$/.test(head) ? head.slice(0, -1) : head}…`;
}

/**
 * The answer, and why nothing was allowed when nothing was (the outcome a built-in tool's
 * refusal carries, decision 0015: `policy-never`, `no-port`, `denied`, `port-failed`,
 * `aborted`, `no-allow-once` when the human allowed but the agent offered no once-option, or
 * `too-many-questions` when the agent asked more at once than its line holds).
 */
export interface PermissionAnswer {
  response: acp.RequestPermissionResponse;
  refusal?: string;
}

export async function answerPermission(req: acp.RequestPermissionRequest, ctx: PermissionContext): Promise<PermissionAnswer> {
  const no = (refusal: string, response: acp.RequestPermissionResponse = reject(req.options)): PermissionAnswer => ({ response, refusal });
  if (ctx.signal.aborted) return no('aborted', cancelled());
  // The agent asks to act past the mode Arbor set for it, with the user's rights and no OS
  // sandbox around it: past a ceiling whatever anyone would answer (as an unconfined command is).
  if (beyondCeiling(ctx.ceiling)) return no('ceiling');
  if (ctx.approvalPolicy !== 'ask') return no('policy-never');
  if (!ctx.approval) return no('no-port');
  const beyond = beyondSandbox(req.toolCall.kind, ctx.sandbox);
  if (beyond) return no(beyond);
  if (!ctx.line) return ask(req, ctx, ctx.approval);
  const asked = await ctx.line.take(() => ask(req, ctx, ctx.approval!));
  return asked ?? no('too-many-questions');
}

/** The human asked (the policy is `ask` and there is a port): their answer as the agent's option. */
async function ask(req: acp.RequestPermissionRequest, ctx: PermissionContext, port: ApprovalPort): Promise<PermissionAnswer> {
  const no = (refusal: string, response: acp.RequestPermissionResponse = reject(req.options)): PermissionAnswer => ({ response, refusal });
  // Stopped while it waited its turn in the line: nobody is asked.
  if (ctx.signal.aborted) return no('aborted', cancelled());
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
    const asked = port.ask(
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
