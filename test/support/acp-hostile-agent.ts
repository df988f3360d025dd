import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk/unstable';

// A hostile ACP agent (issue 20 point 6, decision 0044): each scenario (ACP_SCENARIO) attacks
// the host one way — floods of output, chatter that never ends, sub-sessions by the hundred
// with huge or terminal-driving titles, states named after Object.prototype, permission
// requests by the dozen. Sizes come from the environment so tests scale them.
// Run: node out/test/support/acp-hostile-agent.js   (stdio: ACP over ndjson)

const scenario = process.env.ACP_SCENARIO ?? 'flood';
const num = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Client = acp.AgentContext;
const update = (client: Client, sessionId: string, u: Record<string, unknown>) =>
  client.notify(acp.methods.client.session.update, { sessionId, update: u as never });
const say = (client: Client, sessionId: string, text: string) =>
  update(client, sessionId, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });

/** Escape sequences a terminal acts on: retitle the window, clear the screen, a one-byte CSI, a right-to-left override. */
export const TERMINAL_ATTACK = '\u001b]0;owned\u0007\u001b[2J\u009b31m\u202eevil';

const PROMPTS: Record<string, (client: Client, sessionId: string) => Promise<acp.PromptResponse>> = {
  // ACP_CHUNKS message chunks of ACP_CHUNK_BYTES each, then (unless ACP_TOOL=0) one tool call with an output as big.
  flood: async (client, sessionId) => {
    const chunks = num('ACP_CHUNKS', 40);
    const piece = 'x'.repeat(num('ACP_CHUNK_BYTES', 7_000_000));
    for (let i = 0; i < chunks; i++) await say(client, sessionId, piece);
    if (process.env.ACP_TOOL === '0') return { stopReason: 'end_turn' };
    await update(client, sessionId, {
      sessionUpdate: 'tool_call',
      toolCallId: 'big',
      title: 'cat huge',
      kind: 'read',
      status: 'pending',
      rawInput: { path: piece },
    });
    await update(client, sessionId, {
      sessionUpdate: 'tool_call_update',
      toolCallId: 'big',
      status: 'completed',
      content: [{ type: 'content', content: { type: 'text', text: piece } }],
    });
    await say(client, sessionId, 'THE END');
    return { stopReason: 'end_turn' };
  },
  // Updates Arbor ignores, forever: it never goes quiet, so no idle timeout ever fires.
  chatter: async (client, sessionId) => {
    for (;;) {
      await update(client, sessionId, { sessionUpdate: 'available_commands_update', availableCommands: [] });
      await sleep(20);
    }
  },
  // ACP_SUBS sub-sessions with huge titles that try to drive the terminal; one id repeated, one id huge.
  subs: async (client, sessionId) => {
    const n = num('ACP_SUBS', 200);
    const title = `${TERMINAL_ATTACK} ${'t'.repeat(num('ACP_TITLE_BYTES', 100_000))}`;
    for (let i = 0; i < n; i++) {
      const sub = i % 50 === 49 ? 'sub-0' : `sub-${i}`; // every 50th announcement repeats the first id
      await update(client, sessionId, { sessionUpdate: 'subagent_update', sessionId: sub, title, state: { state: 'running' } });
    }
    await update(client, sessionId, { sessionUpdate: 'subagent_update', sessionId: 'i'.repeat(100_000), title: 'huge id' });
    await say(client, sessionId, 'announced');
    return { stopReason: 'end_turn' };
  },
  // States named after what every object has: unknown states, not handlers.
  proto: async (client, sessionId) => {
    for (const state of ['__proto__', 'constructor', 'toString', 'hasOwnProperty'])
      await update(client, sessionId, { sessionUpdate: 'subagent_update', sessionId: `sub-${state}`, title: state, state: { state } });
    await say(client, sessionId, 'still fine');
    return { stopReason: 'end_turn' };
  },
  // Usage past any count a log keeps (ACP_USAGE tokens each way; default 1e300): a lie, never a broken log.
  usage: async (client, sessionId) => {
    await say(client, sessionId, 'spent it all');
    const n = num('ACP_USAGE', 1e300);
    return { stopReason: 'end_turn', usage: { inputTokens: n, outputTokens: n, totalTokens: n * 2 } as never };
  },
  // ACP_ASKS permission requests, each for a call of its own that then fails.
  'refuse-many': async (client, sessionId) => {
    const n = num('ACP_ASKS', 3);
    for (let i = 0; i < n; i++) {
      const toolCallId = `t${i}`;
      await update(client, sessionId, {
        sessionUpdate: 'tool_call',
        toolCallId,
        title: `Run step ${i}`,
        kind: 'execute',
        status: 'pending',
        rawInput: { command: `step ${i}` },
      });
      const answer = await client.request(acp.methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId, title: `Run step ${i}`, kind: 'execute', rawInput: { command: `step ${i}` } },
        options: [
          { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
          { optionId: 'no', name: 'Reject', kind: 'reject_once' },
        ],
      });
      const got = answer.outcome.outcome === 'selected' ? answer.outcome.optionId : 'cancelled';
      await update(client, sessionId, {
        sessionUpdate: 'tool_call_update',
        toolCallId,
        status: got === 'always' ? 'completed' : 'failed',
        content: [{ type: 'content', content: { type: 'text', text: `answer: ${got}` } }],
      });
    }
    await say(client, sessionId, 'done asking');
    return { stopReason: 'end_turn' };
  },
};

let sessions = 0;
const app = acp
  .agent({ name: 'arbor-hostile' })
  .onRequest(acp.methods.agent.initialize, async () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: 'arbor-hostile', version: '6.6.6' },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, async () => ({ sessionId: `hostile-session-${++sessions}` }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => PROMPTS[scenario](client, params.sessionId))
  // It ignores cancels: only its process group's end stops it.
  .onNotification(acp.methods.agent.session.cancel, () => undefined);

app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>));
