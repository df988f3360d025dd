import { spawn } from 'node:child_process';
import { signalGroup } from '../process/group';
import { PlacementError } from './types';

// `check()` for every transport (decision 0071): one connection runs `arbor --version` on the
// other side (`CHECK_SCRIPT`), then one line goes there and back over the link already open: that
// echo is the round trip shown on the node (the connection's own setup — ssh's handshake and
// login, a container's start — is not a round trip and is left out).

export interface Probe {
  /** What `arbor --version` printed (first line), when the script got that far. */
  version?: string;
  /** Its exit status (127: not found). */
  arborExit?: number;
  rttMs?: number;
  /** The transport's own exit (ssh: 255 when it could not connect or log in). */
  code: number | null;
  stderr: string;
  spawnError?: string;
}

const PING = 'arbor-placement-ping';

export function probe(file: string, args: readonly string[], env: Record<string, string>, timeoutMs: number, signal?: AbortSignal): Promise<Probe> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const result: Probe = { code: null, stderr: '' };
    let out = '';
    let pingAt = 0;
    const stop = () => signalGroup(child.pid, 'SIGKILL');
    const timer = setTimeout(stop, timeoutMs);
    signal?.addEventListener('abort', stop, { once: true });
    child.stdin.on('error', () => undefined);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s: string) => {
      result.stderr = (result.stderr + s).slice(-20_000);
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s: string) => {
      out += s;
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl).trim();
        out = out.slice(nl + 1);
        const exit = /^arbor-check-exit=(\d+)$/.exec(line);
        if (exit) {
          result.arborExit = Number(exit[1]);
          pingAt = performance.now();
          child.stdin.write(`${PING}\n`);
        } else if (line === PING && pingAt) {
          result.rttMs = Math.round((performance.now() - pingAt) * 10) / 10;
          child.stdin.end();
        } else if (result.arborExit === undefined && result.version === undefined && line) result.version = line;
      }
    });
    child.once('error', (err) => {
      result.spawnError = err.message;
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      result.code = code;
      resolve(result);
    });
  });
}

/** The version in `arbor --version`'s line (`arbor 0.1.0` → `0.1.0`). */
export function versionIn(line: string | undefined): string | undefined {
  return line?.match(/\b(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)\b/)?.[1];
}

/**
 * The verdict on the arbor found there, once the link itself worked: NO_ARBOR (with how to install
 * the pinned version) or VERSION_MISMATCH (both versions); undefined when it is this Arbor's version.
 */
export function arborVerdict(p: Probe, where: string, arbor: string, version: string): PlacementError | undefined {
  const install = `install the pinned version there (npm install -g arbor@${version}, or this repository's bin/arbor.js at ${version}) and name it in the placement's "arbor"`;
  if (p.arborExit === undefined) return undefined;
  if (p.arborExit === 127 || p.arborExit === 126)
    return new PlacementError('NO_ARBOR', `${where} has no runnable "${arbor}" (${p.version ?? `exit ${p.arborExit}`}); ${install}.`);
  const found = versionIn(p.version);
  if (p.arborExit !== 0 || !found)
    return new PlacementError(
      'NO_ARBOR',
      `"${arbor} --version" on ${where} did not answer with a version (${p.version ?? `exit ${p.arborExit}`}); ${install}.`,
    );
  if (found !== version)
    return new PlacementError(
      'VERSION_MISMATCH',
      `${where} runs arbor ${found}, this Arbor is ${version}: the two must be the same version to speak ACP reliably; ${install}.`,
    );
  return undefined;
}
