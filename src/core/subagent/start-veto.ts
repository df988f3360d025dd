import type { ChildStart, RuntimeDeps } from './runtime-deps';
import { SubagentError } from './types';

/**
 * A `beforeStart` veto (or its failure: fail closed) as the refusal the delegation tools show.
 * Undefined when no check applies, so a start without hooks runs without an await.
 */
export function vetoCheck(deps: Pick<RuntimeDeps, 'beforeStart'>, c: ChildStart): Promise<void> | undefined {
  let asked: Promise<string | undefined> | undefined;
  try {
    asked = deps.beforeStart?.(c);
  } catch (err) {
    asked = Promise.reject(err);
  }
  return asked && vetoed(asked);
}

async function vetoed(asked: Promise<string | undefined>): Promise<void> {
  let why: string | undefined;
  try {
    why = await asked;
  } catch (err) {
    why = `the check before it failed (${err instanceof Error ? err.message : String(err)})`;
  }
  if (why)
    throw new SubagentError(
      'HOOK_BLOCKED',
      `A SubagentStart hook refused to start this subagent: ${why}. Nothing was started; do the work yourself or change the request.`,
    );
}
