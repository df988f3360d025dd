#!/usr/bin/env node
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk/unstable';

// A remote program that leaves things behind (issue 20, finding 7): deaf to SIGTERM and SIGINT,
// it starts a sleeper in its own process group and one in a session of its own (`setsid`,
// which a group kill misses), writes `{role, pid}` lines to LEAVER_FILE once both run, then
// works forever. Every process it makes carries LEAVER_TOKEN in its command line (the sleepers
// sleep `<token>1` and `<token>2` seconds): inside a PID namespace the pids it sees are not the
// host's, so a test finds its processes by that token.
// Speaks codex's `exec --json` (LEAVER_WIRE=codex, the default) or ACP (LEAVER_WIRE=acp).
//   node out/test/support/leaver.js <anything>     (env: LEAVER_FILE, LEAVER_TOKEN, LEAVER_WIRE)

const file = process.env.LEAVER_FILE ?? '';
const token = process.env.LEAVER_TOKEN ?? '3600';

if (process.argv.includes('--version')) {
  process.stdout.write('leaver 1.0\n');
  process.exit(0);
}
process.on('SIGTERM', () => undefined);
process.on('SIGINT', () => undefined);
setInterval(() => undefined, 1000);

function leaveSleepers(): void {
  const same = spawn('sleep', [`${token}1`], { stdio: 'ignore' });
  const own = spawn('sleep', [`${token}2`], { stdio: 'ignore', detached: true }); // setsid
  const lines = [
    { role: 'program', pid: process.pid },
    { role: 'same-group sleeper', pid: same.pid },
    { role: 'setsid sleeper', pid: own.pid },
  ];
  fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
}

if (process.env.LEAVER_WIRE === 'acp') {
  acp
    .agent({ name: 'leaver' })
    .onRequest(acp.methods.agent.initialize, async () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: false },
      agentInfo: { name: 'leaver', version: '1.0' },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, async () => ({ sessionId: 'leaver-session' }))
    // Never answers: it works until it is killed, and a `session/cancel` changes nothing.
    .onRequest(acp.methods.agent.session.prompt, () => {
      leaveSleepers();
      return new Promise<acp.PromptResponse>(() => undefined);
    })
    .onNotification(acp.methods.agent.session.cancel, () => undefined)
    .connect(acp.ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>));
  // A closed stdin does not end it either.
  process.stdin.on('end', () => undefined);
} else {
  process.stdout.write(`${JSON.stringify({ type: 'thread.started', thread_id: 'leaver-thread' })}\n`);
  leaveSleepers();
}
