import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REMOTE_BOUNDS } from '../../src/core/subagent/remote-bounds';
import { arbor, type CliRun, cliWorld } from '../support/cli';
import { arborBin } from '../support/cli-bundle';

// A hostile ACP agent behind `arbor run` (issue 20 point 6, decision 0044), in real processes:
// the host's memory stays bounded while the agent floods, the parent's model is sent a bounded
// request, and what the agent names (sub-session titles) never drives the terminal in `arbor sessions`.
const BIN = arborBin();
const HOSTILE = path.join(__dirname, '..', 'support', 'acp-hostile-agent.js');

/** The peak resident memory (VmHWM, bytes) of a process, read from /proc while it runs. */
function peakOf(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0; // gone
  }
}

/** `arbor ARGS` in a new process, its peak memory sampled every 50 ms; killed after `timeoutMs`. */
function measured(args: string[], timeoutMs: number): Promise<CliRun & { peak: number }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ARBOR_API_KEY: 'test', DEEPSEEK_API_KEY: '', OPENAI_API_KEY: '', ARBOR_STORE: '' };
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const sampler = setInterval(() => (peak = Math.max(peak, peakOf(child.pid!))), 50);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(sampler);
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr, peak });
    });
  });
}

const MiB = 1024 * 1024;
/** What a terminal acts on (newline and tab aside). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the attack is control characters
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('remote: a hostile ACP agent behind arbor run (real processes)', function () {
  this.timeout(300_000);
  const w = cliWorld('arbor-hostile-');

  /** `arbor run` whose model delegates once to the hostile agent in `scenario`, then answers. */
  async function runHostile(scenario: string, env: Record<string, string>) {
    const cfg = path.join(w.dir, 'config.json');
    fs.writeFileSync(
      cfg,
      JSON.stringify({ remote: { acp: [{ name: 'hostile', command: process.execPath, args: [HOSTILE], env: { ACP_SCENARIO: scenario, ...env } }] } }),
    );
    w.server.setFallback((_b, i) => (i === 0 ? { toolCalls: [{ name: 'delegate_acp_hostile', arguments: { prompt: 'go' } }] } : { text: 'parent done' }));
    const r = await measured(['run', ...w.common, '--config', cfg, 'delegate it'], 240_000);
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    assert.equal(w.server.requests.length, 2, 'the parent asked its model twice');
    return { ...r, parentRequest: w.server.requests[1].raw.length };
  }

  // The finding: 40 chunks of 7 MB drove arbor run to a 4.97 GB peak and a 294 MB request to the
  // parent's model. Scaled to 12 chunks (84 MB, twenty times the turn's bound) to spare the machine.
  it('chunks of 7 MB: the host stays under 400 MiB and the parent is sent a bounded request', async () => {
    const r = await runHostile('flood', { ACP_CHUNKS: '12', ACP_CHUNK_BYTES: '7000000', ACP_TOOL: '0' });
    assert.ok(r.parentRequest < REMOTE_BOUNDS.answerBytes + 64 * 1024, `the parent's request is ${r.parentRequest} bytes`);
    assert.ok(r.peak > 0, 'the peak was measured');
    assert.ok(r.peak < 400 * MiB, `arbor run peaked at ${Math.round(r.peak / MiB)} MiB`);
  });

  it('100,000 chunks of 100 bytes: the host stays under 350 MiB and the parent is sent a bounded request', async () => {
    const r = await runHostile('flood', { ACP_CHUNKS: '100000', ACP_CHUNK_BYTES: '100', ACP_TOOL: '0' });
    assert.ok(r.parentRequest < REMOTE_BOUNDS.answerBytes + 64 * 1024, `the parent's request is ${r.parentRequest} bytes`);
    assert.ok(r.peak < 350 * MiB, `arbor run peaked at ${Math.round(r.peak / MiB)} MiB`);
  });

  it('sub-session titles with escape sequences reach `arbor sessions` (and arbor run) shown, never as control characters', async () => {
    const r = await runHostile('subs', { ACP_SUBS: '3', ACP_TITLE_BYTES: '10' });
    const list = await arbor(['sessions', '--store', w.store]);
    assert.equal(list.code, 0, list.stderr);
    for (const out of [list.stdout, list.stderr, r.stdout, r.stderr]) assert.doesNotMatch(out, CONTROLS, JSON.stringify(out.slice(0, 400)));
    assert.match(list.stdout, /\\u001b\]0;owned\\u0007\\u001b\[2J\\u009b31m\\u202eevil/, 'the title is shown, its controls escaped');
    // --json stays JSON, with the same title.
    const json = await arbor(['sessions', '--json', '--store', w.store]);
    const titles = (JSON.parse(json.stdout) as { title?: string }[]).map((s) => s.title ?? '');
    assert.ok(titles.some((t) => t.startsWith('\u001b]0;owned\u0007\u001b[2J\u009b31m\u202eevil')));
  });
});
