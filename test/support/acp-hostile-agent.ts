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
  // A usage no program spends (ACP_USAGE tokens of each kind, 1e308 by default) on a turn that otherwise went well.
  usage: async (client, sessionId) => {
    await say(client, sessionId, 'spent it all');
    const n = Number(process.env.ACP_USAGE ?? 1e308);
    return { stopReason: 'end_turn', usage: { inputTokens: n, outputTokens: n, cachedReadTokens: n, cachedWriteTokens: n, totalTokens: n } };
  },
  // ACP_SUBS sub-sessions announced under ids of their own, each ACP_ID_BYTES long (too long to be shown).
  'sub-ids': async (client, sessionId) => {
    const n = num('ACP_SUBS', 100);
    const bytes = num('ACP_ID_BYTES', 4_000_000);
    for (let i = 0; i < n; i++) {
      const id = `${i}-${'i'.repeat(bytes)}`;
      await update(client, sessionId, { sessionUpdate: 'subagent_update', sessionId: id, title: 'sub', state: { state: 'running' } });
    }
    await sleep(num('ACP_HOLD_MS', 0)); // the turn goes on a while with all of them announced
    await say(client, sessionId, 'announced');
    return { stopReason: 'end_turn' };
  },
  // ACP_ASKS permission requests at once (not one after another), each with a title of ACP_TITLE_BYTES.
  'ask-flood': async (client, sessionId) => {
    const n = num('ACP_ASKS', 50);
    const title = `Run ${'t'.repeat(num('ACP_TITLE_BYTES', 100_000))}`;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        client
          .request(acp.methods.client.session.requestPermission, {
            sessionId,
            toolCall: { toolCallId: `f${i}`, title, kind: 'execute', rawInput: { command: title } },
            options: [
              { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
              { optionId: 'no', name: 'Reject', kind: 'reject_once' },
            ],
          })
          .then((a) => (a.outcome.outcome === 'selected' ? a.outcome.optionId : 'cancelled')),
      ),
    );
    await say(client, sessionId, `answers: ${answers.join(',')}`);
    return { stopReason: 'end_turn' };
  },
  // One sub-session that ACP_CHURN times goes idle and runs again under a new title (each a turn and a label in its log).
  'sub-churn': async (client, sessionId) => {
    const sub = 'churner';
    for (let i = 0; i < num('ACP_CHURN', 5000); i++) {
      await update(client, sessionId, { sessionUpdate: 'subagent_update', sessionId: sub, title: `title ${i}`, state: { state: 'running' } });
      await update(client, sessionId, { sessionUpdate: 'subagent_update', sessionId: sub, state: { state: 'idle', stopReason: 'end_turn' } });
    }
    await say(client, sessionId, 'churned');
    return { stopReason: 'end_turn' };
  },
  // Asks permission and ends its turn without waiting for the answer: the question outlives the turn.
  'late-ask': async (client, sessionId) => {
    void client
      .request(acp.methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: 'late', title: 'Run late', kind: 'execute', rawInput: { command: 'late' } },
        options: [
          { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
          { optionId: 'no', name: 'Reject', kind: 'reject_once' },
        ],
      })
      .catch(() => undefined);
    await sleep(200); // the question is on its way to the human
    await say(client, sessionId, 'done without waiting');
    return { stopReason: 'end_turn' };
  },
  // ACP_CALLS tool calls left open, each under an id of its own ACP_ID_BYTES long.
  'call-ids': async (client, sessionId) => {
    const bytes = num('ACP_ID_BYTES', 4_000_000);
    for (let i = 0; i < num('ACP_CALLS', 60); i++)
      await update(client, sessionId, {
        sessionUpdate: 'tool_call',
        toolCallId: `${i}-${'c'.repeat(bytes)}`,
        title: `call ${i}`,
        kind: 'read',
        status: 'pending',
      });
    await sleep(num('ACP_HOLD_MS', 0));
    await say(client, sessionId, 'left them open');
    return { stopReason: 'end_turn' };
  },
  // One permission question per kind of call (announced with its kind; the question about 'edit-unnamed' names no kind).
  'ask-kinds': async (client, sessionId) => {
    const answers: string[] = [];
    for (const kind of ['read', 'execute', 'edit', 'delete', 'move', 'switch_mode', 'edit-unnamed']) {
      const real = kind === 'edit-unnamed' ? 'edit' : kind;
      const toolCallId = `k-${kind}`;
      await update(client, sessionId, { sessionUpdate: 'tool_call', toolCallId, title: `Do ${kind}`, kind: real, status: 'pending' });
      const answer = await client.request(acp.methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId, title: `Do ${kind}`, ...(kind === 'edit-unnamed' ? {} : { kind: real as acp.ToolKind }), rawInput: { path: '/etc/x' } },
        options: [
          { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
          { optionId: 'no', name: 'Reject', kind: 'reject_once' },
        ],
      });
      answers.push(`${kind}=${answer.outcome.outcome === 'selected' ? answer.outcome.optionId : 'cancelled'}`);
      await update(client, sessionId, { sessionUpdate: 'tool_call_update', toolCallId, status: 'completed' });
    }
    await say(client, sessionId, `answers: ${answers.join(',')}`);
    return { stopReason: 'end_turn' };
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
