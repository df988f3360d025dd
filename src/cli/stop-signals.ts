import { killLiveGroups, liveGroupCount } from '../core/process/live-groups';
import type { Io } from './output';

/** How long Ctrl+C waits for the remote programs to stop by themselves before they are killed. */
export const INTERRUPT_STOP_MS = 5000;
/** After that (or after SIGTERM), how long closing may still take before the process leaves anyway. */
const EXIT_AFTER_MS = 3000;

export interface StopSignals {
  /** Resolves with the exit code once a stop signal arrives: `sigtermCode` (default 1) for SIGTERM, 130 for Ctrl+C. */
  signalled: Promise<number>;
  /** After the harness closed: what is left of the remote programs is killed, and Ctrl+C says what it did. */
  finish(): void;
  dispose(): void;
}

/**
 * SIGTERM and Ctrl+C while a command runs turns (`arbor run`, `arbor send`, `arbor acp`).
 * The caller closes the harness on `signalled`, so every running turn ends `interrupted` in the
 * log and every remote program is stopped the way a Stop stops it (decision 0036).
 * - SIGTERM (a parent Arbor stopping its dsh-sdk child, decision 0039): exit 1 (`arbor acp`: 0).
 * - Ctrl+C: the programs get `INTERRUPT_STOP_MS` to stop, then whatever runs is SIGKILLed; exit
 *   130 with a line saying so. A second Ctrl+C kills them at once and exits without waiting.
 * Whatever still holds the loop after that (a model socket being torn down) does not keep the
 * process alive: it leaves anyway, SIGKILLing the programs first.
 */
export function onStopSignals(io: Io, opts: { sigtermCode?: number } = {}): StopSignals {
  const termCode = opts.sigtermCode ?? 1;
  let interrupted = false;
  let killedLate = 0;
  const leave = (code: number) => {
    killLiveGroups();
    process.exit(code);
  };
  let onTerm: (() => void) | undefined;
  let onInt: (() => void) | undefined;
  const signalled = new Promise<number>((resolve) => {
    onTerm = () => {
      io.err('arbor: stopped by SIGTERM; closing the running turns');
      setTimeout(() => leave(termCode), EXIT_AFTER_MS).unref();
      resolve(termCode);
    };
    onInt = () => {
      if (interrupted) {
        const n = killLiveGroups();
        io.err(`arbor: interrupted again (Ctrl+C): ${n} remote program(s) killed (SIGKILL); quitting without closing the turns (the next start closes them)`);
        process.exit(130);
      }
      interrupted = true;
      const n = liveGroupCount();
      io.err(
        `arbor: interrupted (Ctrl+C): closing the running turns${n ? ` and stopping ${n} remote program(s) (up to ${INTERRUPT_STOP_MS / 1000} s)` : ''}; Ctrl+C again to quit at once`,
      );
      setTimeout(() => {
        killedLate = killLiveGroups();
        setTimeout(() => leave(130), EXIT_AFTER_MS).unref();
      }, INTERRUPT_STOP_MS).unref();
      resolve(130);
    };
    process.once('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
  let code: number | undefined;
  void signalled.then((c) => (code = c));
  return {
    signalled,
    finish() {
      const left = killLiveGroups();
      if (code !== undefined) setTimeout(() => leave(code!), EXIT_AFTER_MS).unref();
      if (!interrupted) return;
      const killed = killedLate + left;
      io.err(
        killed
          ? `arbor: interrupted (Ctrl+C): the running turns ended interrupted; ${killed} remote program(s) did not stop in time and were killed (SIGKILL)`
          : 'arbor: interrupted (Ctrl+C): the running turns ended interrupted; every remote program stopped',
      );
    },
    dispose() {
      if (onTerm) process.off('SIGTERM', onTerm);
      if (onInt) process.off('SIGINT', onInt);
    },
  };
}
