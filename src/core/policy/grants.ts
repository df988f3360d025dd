import type { ApprovalGrantEvent, GrantScope, SandboxMode, SessionEvent, SessionHeader } from '../session/events';

// "Allow for this conversation" (decision 0012): a durable, revocable grant that skips the
// *ask* for one tool within one scope, folded from the session's own log. It never widens
// the sandbox: the tools still resolve paths and refuse what the mode forbids before asking.

export type { GrantScope } from '../session/events';

/** An active grant, as folded from the log. */
export interface ApprovalGrant {
  grantId: string;
  tool: string;
  scope: GrantScope;
  sandbox?: SandboxMode;
  /** The seq of the event that granted it. */
  seq: number;
  at: string;
}

/** What a request is about, in the terms a grant can cover. */
export type ApprovalTarget = { kind: 'command'; command: string } | { kind: 'path'; path: string };

/**
 * Active grants of a session, last event per `grantId` wins. Only events after the fork
 * seed count: a grant belongs to the conversation the user gave it in, so a fork (or a
 * forked subagent) does not carry its parent's grants along with the copied history.
 */
export function activeGrants(header: SessionHeader, events: readonly SessionEvent[]): ApprovalGrant[] {
  const byId = new Map<string, ApprovalGrantEvent>();
  for (let i = header.seedLength ?? 0; i < events.length; i++) {
    const e = events[i];
    if (e.type === 'approval/grant') {
      byId.delete(e.grantId); // re-granting moves it to the end (newest last)
      byId.set(e.grantId, e);
    }
  }
  const out: ApprovalGrant[] = [];
  for (const e of byId.values()) {
    if (e.revoked) continue;
    out.push({ grantId: e.grantId, tool: e.tool, scope: e.scope, ...(e.sandbox ? { sandbox: e.sandbox } : {}), seq: e.seq, at: e.at });
  }
  return out;
}

// Anything that chains, substitutes, redirects or backgrounds: `npm test && rm -rf ~` starts
// with `npm test` but is not `npm test`. Such a command is never covered and never offered.
const SHELL_CONTROL = /[;&|`$<>(){}\n\r\\*?~!#'"]/;
const WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

function words(command: string): string[] | undefined {
  if (SHELL_CONTROL.test(command)) return undefined;
  const w = command.trim().split(/\s+/);
  return w.length > 0 && w[0] !== '' && w.every((x) => WORD.test(x)) ? w : undefined;
}

const SUBCOMMAND = /^[A-Za-z][A-Za-z0-9:_-]*$/;

/**
 * The prefix a command grant would cover: the program and its sub-command (`npm test`
 * covers `npm test -- --grep x`, not `npm publish`); a command without a sub-command word
 * (`node --version`, `ls`) is covered as a whole, plus arguments appended to it. A command
 * with shell control characters has no prefix (it can only be allowed once).
 */
export function commandPrefix(command: string): string | undefined {
  const w = words(command);
  if (!w) return undefined;
  if (w.length >= 2 && SUBCOMMAND.test(w[1])) return `${w[0]} ${w[1]}`;
  return w.join(' ');
}

/** The scope "allow for this conversation" would record for a target, if one may be offered. */
export function offeredScope(target: ApprovalTarget): GrantScope | undefined {
  if (target.kind === 'path') return { kind: 'path', value: target.path };
  const prefix = commandPrefix(target.command);
  return prefix ? { kind: 'command-prefix', value: prefix } : undefined;
}

/**
 * Why "allow for this conversation" is not offered for a target, in words for the person
 * deciding (the card says it instead of leaving the button out silently); undefined when it is.
 */
export function whyNoGrant(target: ApprovalTarget): string | undefined {
  if (offeredScope(target)) return undefined;
  return SHELL_CONTROL.test(target.kind === 'command' ? target.command : '')
    ? 'Only once: this command chains, pipes, redirects or substitutes (;, &&, |, >, $ …), so a rule for its first words would allow more than you see here.'
    : 'Only once: this command has characters a rule for its first words cannot match safely.';
}

const RANK: Record<SandboxMode, number> = { 'read-only': 0, 'workspace-write': 1, 'full-access': 2 };

/** True when the grant covers this tool and target under the current sandbox mode. */
export function grantCovers(grant: ApprovalGrant, tool: string, target: ApprovalTarget, sandbox: SandboxMode): boolean {
  if (grant.tool !== tool) return false;
  // Granted under workspace-write, it does not follow the user into read-only.
  if (grant.sandbox && RANK[sandbox] < RANK[grant.sandbox]) return false;
  if (target.kind === 'path') return grant.scope.kind === 'path' && grant.scope.value === target.path;
  if (grant.scope.kind !== 'command-prefix') return false;
  const w = words(target.command);
  const p = grant.scope.value.split(' ');
  return !!w && w.length >= p.length && p.every((x, i) => w[i] === x);
}

/** A session's grants as tools see them: look one up, or record a new one (durably). */
export interface GrantBook {
  find(tool: string, target: ApprovalTarget, sandbox: SandboxMode): ApprovalGrant | undefined;
  record(tool: string, scope: GrantScope, sandbox: SandboxMode): Promise<void>;
}
