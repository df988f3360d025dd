// The host ⇄ script-process messages (over the fork's IPC channel, JSON only). What the
// child sends is validated here: a script that escapes its vm context can post anything.

/** Host → child. */
export type ToChild =
  | { op: 'start'; script: string; args: unknown }
  | { op: 'agent-result'; id: number; ok: true; value: unknown }
  | { op: 'agent-result'; id: number; ok: false; code: string; message: string };

/** Child → host. */
export type FromChild =
  | { op: 'ready' }
  | { op: 'agent'; id: number; prompt: unknown; opts: unknown }
  | { op: 'phase'; title: string }
  | { op: 'log'; message: string }
  | { op: 'done'; ok: true; json: string | null }
  | { op: 'done'; ok: false; code: string; message: string; line?: number };

const rec = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): v is string => typeof v === 'string';

const CHECKS: Record<string, (m: Record<string, unknown>) => boolean> = {
  ready: () => true,
  agent: (m) => Number.isSafeInteger(m.id) && (m.id as number) >= 0,
  phase: (m) => str(m.title),
  log: (m) => str(m.message),
  done: (m) =>
    m.ok === true ? m.json === null || str(m.json) : m.ok === false && str(m.code) && str(m.message) && (m.line === undefined || Number.isSafeInteger(m.line)),
};

/** The message if it is one the child may send, else undefined (the host then ends the run: SCRIPT_PROTOCOL). */
export function checkFromChild(m: unknown): FromChild | undefined {
  if (!rec(m) || !str(m.op)) return undefined;
  const check = Object.hasOwn(CHECKS, m.op) ? CHECKS[m.op] : undefined;
  return check?.(m) ? (m as unknown as FromChild) : undefined;
}

/** Exit code the child uses when the script awaits a promise nothing can settle. */
export const EXIT_STALLED = 3;
