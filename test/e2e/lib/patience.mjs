// Waits that follow what the workbench is doing, so the UI flows hold on a loaded machine.
//
// Every wait has a nominal time: what it takes on a quiet machine, with room. Past it, a wait
// goes on only while the workbench is making progress — its processes (code-server with its
// extension host, Chromium) keep wanting CPU (running, or runnable and waiting for a core on a
// loaded machine), the model server keeps getting requests, or the
// wait's own signature (e.g. how far the panel has come) keeps changing — and fails as soon as
// all of that has been still for QUIET_MS, or at PATIENCE times its nominal time at the latest.
// On a quiet machine a wait that will never succeed fails at about its nominal time (plus the
// few seconds the workbench takes to go still); on a busy one a slow success is not a failure.
import { groupDemandMs } from '../../../scripts/e2e/code-server.mjs';
import { sleep } from './common.mjs';

/** How many times its nominal time a wait may take while the workbench is busy (ARBOR_UI_PATIENCE). */
export const PATIENCE = Number(process.env.ARBOR_UI_PATIENCE ?? 4);
/** Past its nominal time, a wait fails once nothing has moved for this long. */
export const QUIET_MS = 5_000;
/**
 * A Playwright action's own timeout (a click, a read of an attribute) stretched by PATIENCE:
 * such a timeout only fails when the element never comes, so on a busy workbench it may take
 * PATIENCE times its nominal time (decision 0050).
 */
export const slack = (ms) => ms * PATIENCE;
/** How long a loading workbench or panel may show no new progress before its wait fails (no cap). */
export const STALL_MS = 60_000;
/** A budget past its cap still waits while a wait inside it reported progress this recently. */
const STALL_GRACE_MS = 2_000;
/** A process group counts as busy in a second it ran or waited to run for this share of one core. */
const BUSY_SHARE = 0.15;
const SAMPLE_MS = 1_000;

/** What the running flow's workbench is doing (one flow runs at a time). */
class Activity {
  #groups = [];
  #signals = [];
  #last = [];
  #ticks = new Map();
  #timer;
  /** When the workbench last made progress; a wait started before any flow treats "now" as progress. */
  lastProgress = Date.now();
  /** CPU share (of one core) the busiest group ran or waited to run in each sample, for the flow's summary. */
  shares = [];

  /** Watches these process groups and signals (functions whose value changes as work is done). */
  start({ groups = [], signals = [] }) {
    this.stop();
    this.#groups = groups.filter(Boolean);
    this.#signals = signals;
    this.#last = signals.map(() => undefined);
    this.#ticks = new Map(this.#groups.map((g) => [g, groupDemandMs(g)]));
    this.shares = [];
    this.lastProgress = Date.now();
    this.#timer = setInterval(() => this.#sample(), SAMPLE_MS);
  }

  stop() {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Explicit progress (a step passed, the panel came a stage further). */
  progressed() {
    this.lastProgress = Date.now();
  }

  get watching() {
    return this.#timer !== undefined;
  }

  /** Milliseconds since the workbench last made progress. */
  quietMs() {
    return Date.now() - this.lastProgress;
  }

  #sample() {
    let share = 0;
    for (const g of this.#groups) {
      const now = groupDemandMs(g);
      // A member that exited takes its time with it: never count that as negative work.
      share = Math.max(share, Math.max(0, now - (this.#ticks.get(g) ?? now)) / SAMPLE_MS);
      this.#ticks.set(g, now);
    }
    this.shares.push(share);
    let moved = share >= BUSY_SHARE;
    this.#signals.forEach((signal, i) => {
      let v;
      try {
        v = signal();
      } catch {
        v = undefined;
      }
      if (v !== this.#last[i]) moved = true;
      this.#last[i] = v;
    });
    if (moved) this.lastProgress = Date.now();
  }

  /** "CPU share of the busiest process group: median 12%, 90th percentile 80%" for the summary. */
  summary() {
    if (!this.shares.length) return 'no samples';
    const s = [...this.shares].sort((a, b) => a - b);
    const at = (q) => Math.round(100 * s[Math.min(s.length - 1, Math.floor(q * s.length))]);
    return `workbench CPU demand (run + wait, busiest group, % of one core): median ${at(0.5)}%, 90th percentile ${at(0.9)}%, busy in ${Math.round((100 * s.filter((x) => x >= BUSY_SHARE).length) / s.length)}% of ${s.length} s`;
  }
}

export const activity = new Activity();

/**
 * Calls `probe` until it returns a truthy value (returned). Past `nominalMs`, goes on while the
 * workbench or `signature()` (any JSON value; a change is progress) moves; see the top of this file.
 * The error names `what`, the last value seen and why the wait gave up.
 */
export async function patiently(what, nominalMs, probe, { signature, stallMs, pollMs = 200, describe = (v) => JSON.stringify(v)?.slice(0, 300) } = {}) {
  const t0 = Date.now();
  // With `stallMs` (waits whose signature shows real progress, such as a loading workbench),
  // there is no cap: the wait fails only when the signature has not changed for that long.
  const cap = stallMs ? Number.POSITIVE_INFINITY : nominalMs * PATIENCE;
  let last;
  let lastSig;
  let sigChanged = signature ? t0 : Number.NEGATIVE_INFINITY;
  for (;;) {
    try {
      last = await probe();
      if (last) return last;
    } catch (err) {
      if (/strict mode violation/.test(err.message)) throw err; // waiting longer cannot help
      last = `error: ${err.message.split('\n')[0]}`;
    }
    if (signature) {
      const sig = JSON.stringify(
        await Promise.resolve()
          .then(signature)
          .catch((err) => `error: ${err.message}`),
      );
      if (sig !== lastSig) {
        lastSig = sig;
        sigChanged = Date.now();
        activity.progressed(); // the step around this wait sees it too
      }
    }
    const now = Date.now();
    const elapsed = now - t0;
    if (elapsed >= nominalMs) {
      const still = stallMs ? now - sigChanged : Math.min(now - sigChanged, activity.watching ? activity.quietMs() : Number.POSITIVE_INFINITY);
      if (still >= (stallMs ?? QUIET_MS) || elapsed >= cap) {
        const why =
          elapsed >= cap
            ? `the workbench was still busy at ${PATIENCE}× that`
            : `waited ${Math.round(elapsed / 1000)} s; nothing had moved for ${Math.round(still / 1000)} s`;
        throw new Error(`${what} (not within ${nominalMs} ms; ${why}; last seen: ${describe(last)}${lastSig ? `; progress: ${lastSig.slice(0, 200)}` : ''})`);
      }
    }
    if (pollMs) await sleep(pollMs);
  }
}

/** Polls `probe` until it returns a truthy value, patiently (see `patiently`). */
export function until(what, timeoutMs, probe) {
  return patiently(what, timeoutMs, probe);
}

/** Waits for a locator to be visible, patiently; the message says what was expected. */
export async function visible(locator, what, timeoutMs, { signature, stallMs } = {}) {
  await patiently(
    `${what} did not appear`,
    timeoutMs,
    async () => {
      await locator.waitFor({ state: 'visible', timeout: Math.min(1_000, timeoutMs) });
      return true;
    },
    {
      signature,
      stallMs,
      pollMs: 0,
      describe: (v) =>
        String(v)
          .replace(/^error: /, '')
          .slice(0, 300),
    },
  );
  return locator;
}

/**
 * Resolves with `promise`, or rejects once `nominalMs` has passed and the workbench has been
 * still for STALL_MS, or past PATIENCE × nominalMs once even that progress has paused: a
 * step's or a flow's budget.
 */
export async function withPatience(promise, nominalMs, what) {
  const t0 = Date.now();
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setInterval(() => {
      const elapsed = Date.now() - t0;
      if (elapsed < nominalMs) return;
      // Not watching (before a flow's workbench is up, or while it is torn down): only the cap.
      const quiet = activity.watching ? activity.quietMs() : 0;
      // A budget is a backstop (the waits inside it give the precise errors): it allows the
      // same stall as a loading workbench, whose progress can pause for seconds at a time.
      if (quiet >= STALL_MS || (elapsed >= nominalMs * PATIENCE && activity.quietMs() >= STALL_GRACE_MS))
        reject(
          new Error(
            `timed out after ${Math.round(elapsed / 1000)} s (budget ${nominalMs / 1000} s; ${elapsed >= nominalMs * PATIENCE ? `the workbench was still busy at ${PATIENCE}× that` : `nothing had moved for ${Math.round(quiet / 1000)} s`}): ${what}`,
          ),
        );
    }, 500);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearInterval(timer);
  }
}
