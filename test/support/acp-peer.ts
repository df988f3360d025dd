import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { PassThrough, Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { arborBin } from './cli-bundle';
import { until } from './harness';

const BIN = arborBin();

export type PermissionHandler = (params: acp.RequestPermissionRequest) => Promise<acp.RequestPermissionResponse>;

/** A real `arbor acp` child process driven by the SDK's own client over its stdio. */
export interface AcpPeer {
  readonly child: ChildProcess;
  /** Every stdout line, raw (each must be one JSON-RPC message). */
  readonly lines: string[];
  readonly stderr: () => string;
  /** Every `session/update` received, in order. */
  readonly updates: acp.SessionNotification[];
  /** Every permission request received, in order. */
  readonly permissions: acp.RequestPermissionRequest[];
  /** How the next permission request is answered (default: reject_once). */
  onPermission: PermissionHandler;
  readonly agent: acp.ClientContext;
  readonly init: acp.InitializeResponse;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  /** Writes raw bytes to the agent's stdin (malformed input tests). */
  raw(text: string): void;
  /** Ends stdin (the client leaves) and waits for the exit code. */
  close(): Promise<number | null>;
}

export type Answer = { id?: unknown; result?: unknown; error?: { code: number; message: string; data?: { code?: string; message?: string } } };

/** The answer to a request sent raw (its id), once it is on stdout. */
export async function answerTo(peer: AcpPeer, id: number): Promise<Answer> {
  let found: Answer | undefined;
  await until(() => {
    found = peer.lines.map((l) => JSON.parse(l) as Answer).find((m) => m.id === id && !('method' in m));
    return found !== undefined || peer.child.exitCode !== null;
  }, 60_000);
  assert.ok(found, `no answer to request ${id}; the agent exited ${peer.child.exitCode}: ${peer.stderr()}`);
  return found;
}

/** A describe's `arbor acp`: the peer a spec put in `peer` is closed after it (if it still runs). */
export function peerPerTest(): { peer: AcpPeer | undefined } {
  const specs: { peer: AcpPeer | undefined } = { peer: undefined };
  afterEach(async () => {
    if (specs.peer && specs.peer.child.exitCode === null) await specs.peer.close();
    specs.peer = undefined;
  });
  return specs;
}

export async function startAcp(
  args: string[],
  opts: {
    subagents?: boolean;
    env?: NodeJS.ProcessEnv;
    /** Node's own flags for the agent process (e.g. a heap snapshot signal). */
    nodeArgs?: string[];
  } = {},
): Promise<AcpPeer> {
  const env = { ...process.env, ARBOR_API_KEY: '', DEEPSEEK_API_KEY: '', OPENAI_API_KEY: '', ARBOR_STORE: '', ...opts.env };
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), BIN, 'acp', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let err = '';
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    partial += d.toString('utf8');
    const parts = partial.split('\n');
    partial = parts.pop()!;
    lines.push(...parts.filter((l) => l !== ''));
  });
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const out = new PassThrough();
  child.stdout!.pipe(out);
  const updates: acp.SessionNotification[] = [];
  const permissions: acp.RequestPermissionRequest[] = [];
  const peer = {
    child,
    lines,
    stderr: () => err,
    updates,
    permissions,
    onPermission: (async () => ({ outcome: { outcome: 'selected', optionId: 'reject_once' } })) as PermissionHandler,
    exited,
    raw: (text: string) => child.stdin!.write(text),
    close: async () => {
      child.stdin!.end();
      return exited;
    },
  } as Partial<AcpPeer> & { onPermission: PermissionHandler };
  const app = acp
    .client({ name: 'arbor-test' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
      return undefined;
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params);
      return peer.onPermission(params);
    });
  const conn = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(out) as ReadableStream<Uint8Array>));
  const init = await conn.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, ...(opts.subagents ? { subagents: {} } : {}) },
    clientInfo: { name: 'arbor-test', version: '1' },
  });
  return Object.assign(peer, { agent: conn.agent, init }) as AcpPeer;
}

/** The text of the agent's message chunks for a session, joined. */
export function agentText(updates: readonly acp.SessionNotification[], sessionId: string): string {
  return updates
    .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === 'agent_message_chunk')
    .map((u) => {
      const c = (u.update as { content: acp.ContentBlock }).content;
      return c.type === 'text' ? c.text : '';
    })
    .join('');
}

/** Every stdout line is one JSON-RPC 2.0 message (nothing else may reach stdout). */
export function assertJsonRpcOnly(peer: AcpPeer): void {
  if (peer.lines.length === 0) throw new Error('no stdout lines at all');
  for (const l of peer.lines) {
    const m = JSON.parse(l) as { jsonrpc?: string };
    if (m.jsonrpc !== '2.0') throw new Error(`not JSON-RPC 2.0: ${l}`);
  }
}
