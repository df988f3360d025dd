import * as fs from 'node:fs';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk/unstable';

// A scripted ACP agent for the provider's bad-input and edge tests (issue 14): each scenario
// (ACP_SCENARIO) misbehaves one way a real agent can. What it was sent and answered is
// appended as JSON lines to ACP_LOG, so a test can check what the client did.
// Run: node out/test/support/acp-fixture-agent.js   (stdio: ACP over ndjson)

const scenario = process.env.ACP_SCENARIO ?? 'plain';
/** The name it gives in `initialize` (a test may have it name itself as another agent does). */
const agentName = process.env.ACP_AGENT_NAME ?? 'arbor-fixture';
const logFile = process.env.ACP_LOG;
const log = (entry: object) => {
  if (logFile) fs.appendFileSync(logFile, `${JSON.stringify(entry)}\n`);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Client = acp.AgentContext;
const say = (client: Client, sessionId: string, text: string) =>
  client.notify(acp.methods.client.session.update, { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } });

let cancelled = false;
let sessionCount = 0;

/** What each scenario does in `session/prompt`; its answer is the prompt response. */
const PROMPTS: Record<string, (client: Client, sessionId: string) => Promise<acp.PromptResponse>> = {
  plain: async (client, sessionId) => {
    for (const piece of ['Hel', 'lo ', 'from ', 'the fixture']) await say(client, sessionId, piece);
    return { stopReason: 'end_turn', usage: { inputTokens: 100, outputTokens: 7, cachedReadTokens: 40, totalTokens: 147 } };
  },
  // Asks the client for a file and a terminal it never advertised: both must be method-not-found.
  'fs-request': async (client, sessionId) => {
    for (const [method, params] of [
      ['fs/read_text_file', { sessionId, path: '/etc/hostname' }],
      ['terminal/create', { sessionId, command: 'true' }],
    ] as const) {
      try {
        await client.request(method, params as never);
        log({ method, answered: 'ok' });
      } catch (err) {
        log({ method, error: (err as { code?: number }).code });
      }
    }
    await say(client, sessionId, 'asked');
    return { stopReason: 'end_turn' };
  },
  crash: async (client, sessionId) => {
    await say(client, sessionId, 'working on it');
    process.stderr.write('fixture: out of cheese at step 2\n');
    await sleep(50);
    process.exit(3);
  },
  // Stray output on stdout (a log line, a bare value) between real messages: skipped, never fatal.
  noisy: async (client, sessionId) => {
    process.stdout.write('this is not json\n[1,2]\n');
    await say(client, sessionId, 'still fine');
    return { stopReason: 'end_turn' };
  },
  // Asks permission for a command, logs the answer it got, says it.
  permission: async (client, sessionId) => {
    await client.notify(acp.methods.client.session.update, {
      sessionId,
      update: {
        sessionUpdate: 'tool_call',
        toolCallId: 't1',
        title: 'Run rm -rf build',
        kind: 'execute',
        status: 'pending',
        rawInput: { command: 'rm -rf build' },
      },
    });
    const answer = await client.request(acp.methods.client.session.requestPermission, {
      sessionId,
      toolCall: { toolCallId: 't1', title: 'Run rm -rf build', kind: 'execute', rawInput: { command: 'rm -rf build' } },
      options: [
        { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
        { optionId: 'once', name: 'Allow once', kind: 'allow_once' },
        { optionId: 'no', name: 'Reject', kind: 'reject_once' },
        { optionId: 'never', name: 'Always reject', kind: 'reject_always' },
      ],
    });
    log({ permission: answer.outcome });
    const got = answer.outcome.outcome === 'selected' ? answer.outcome.optionId : 'cancelled';
    await client.notify(acp.methods.client.session.update, {
      sessionId,
      update: {
        sessionUpdate: 'tool_call_update',
        toolCallId: 't1',
        status: got === 'once' ? 'completed' : 'failed',
        content: [{ type: 'content', content: { type: 'text', text: `answer: ${got}` } }],
      },
    });
    await say(client, sessionId, `permission ${got}`);
    return { stopReason: cancelled ? 'cancelled' : 'end_turn' };
  },
  // Streams slowly until cancelled; answers `cancelled` (a well-behaved agent).
  slow: async (client, sessionId) => {
    for (let i = 0; i < 600 && !cancelled; i++) {
      await say(client, sessionId, `${i} `);
      await sleep(100);
    }
    return { stopReason: cancelled ? 'cancelled' : 'end_turn' };
  },
  // Never stops, whatever it is told: the client must kill its group.
  stubborn: async (client, sessionId) => {
    for (;;) {
      await say(client, sessionId, '.');
      await sleep(100);
    }
  },
  // A tool call whose completing update never comes (Zed's codex-acp does this).
  unanswered: async (client, sessionId) => {
    await client.notify(acp.methods.client.session.update, {
      sessionId,
      update: { sessionUpdate: 'tool_call', toolCallId: 'lost', title: 'Search', kind: 'search', status: 'in_progress', rawInput: { query: 'x' } },
    });
    await say(client, sessionId, 'done anyway');
    return { stopReason: 'end_turn' };
  },
  refusal: async () => ({ stopReason: 'refusal' }),
  'max-tokens': async (client, sessionId) => {
    await say(client, sessionId, 'cut sh');
    return { stopReason: 'max_tokens' };
  },
  // Announces a sub-session of its own (unstable subagent_update), which then asks permission itself.
  'sub-permission': async (client, sessionId) => {
    const sub = 'fixture-sub-1';
    await client.notify(acp.methods.client.session.update, {
      sessionId,
      update: { sessionUpdate: 'subagent_update', sessionId: sub, title: 'helper', capabilities: { cancel: {} }, state: { state: 'running' } },
    });
    await say(client, sub, 'sub working');
    const answer = await client.request(acp.methods.client.session.requestPermission, {
      sessionId: sub,
      toolCall: { toolCallId: 's1', title: 'Delete the cache', kind: 'delete', rawInput: { path: 'cache' } },
      options: [
        { optionId: 'once', name: 'Allow once', kind: 'allow_once' },
        { optionId: 'no', name: 'Reject', kind: 'reject_once' },
      ],
    });
    log({ permission: answer.outcome });
    await client.notify(acp.methods.client.session.update, {
      sessionId,
      update: { sessionUpdate: 'subagent_update', sessionId: sub, state: { state: 'idle', stopReason: 'end_turn' } },
    });
    await say(client, sessionId, 'parent done');
    return { stopReason: 'end_turn' };
  },
  modes: async (client, sessionId) => {
    await say(client, sessionId, 'in mode');
    return { stopReason: 'end_turn' };
  },
};

const app = acp
  .agent({ name: 'arbor-fixture' })
  .onRequest(acp.methods.agent.initialize, async ({ params }) => {
    log({ method: 'initialize', clientCapabilities: params.clientCapabilities });
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: false },
      agentInfo: { name: agentName, version: '9.9.9' },
      authMethods: scenario === 'auth' ? [{ id: 'login', name: 'Log in', description: 'Run `fixture login` first' }] : [],
    };
  })
  .onRequest(acp.methods.agent.session.new, async ({ params }) => {
    log({ method: 'session/new', cwd: params.cwd, mcpServers: params.mcpServers, _meta: params._meta });
    if (scenario === 'auth') throw acp.RequestError.authRequired(undefined, 'Run `fixture login` first');
    sessionCount++;
    return {
      sessionId: `fixture-session-${sessionCount}`,
      ...(scenario === 'modes'
        ? {
            modes: {
              currentModeId: 'ask',
              availableModes: [
                { id: 'ask', name: 'Ask' },
                { id: 'ro', name: 'Read only' },
                { id: 'yolo', name: 'Anything' },
              ],
            },
          }
        : {}),
    };
  })
  .onRequest(acp.methods.agent.session.setMode, async ({ params }) => {
    log({ method: 'session/set_mode', modeId: params.modeId });
    return {};
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    log({ method: 'session/prompt', text: params.prompt.map((b) => (b.type === 'text' ? b.text : b.type)).join('') });
    return PROMPTS[scenario](client, params.sessionId);
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    log({ method: 'session/cancel', sessionId: params.sessionId });
    cancelled = true;
    return undefined;
  });

app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>));
// Like a real agent: a closed stdin ends it.
process.stdin.on('end', () => process.exit(0));
