// A small, realistic scene for the harness: two conversations with subagents, a fork, a
// failed child, a workflow run under way (its node over its agents); the root's chat holds
// a tool call, a report, a settlement notice, an interrupted turn, live streamed text and a
// grandchild's approval.
import type { HostToWebview, TranscriptEntry, TreeNode, WebviewToHost } from '../../src/protocol';

const ROOT = 's-m3k9x2a1-7f3c9e21';
const B = `${ROOT}.a41c07`;
const C = `${B}.9e2d11`;
const D = `${ROOT}.c7b2f0`;
const E = `${D}.1d8e44`;
const F = `${ROOT}.f5a9b3c`;
const G = `${ROOT}.e02b6d`;
const H = 's-m3k7q0b8-2c4d6e8f';
const I = `${H}.b3f1aa`;
const J = `${H}.f7c21de`;
// A workflow run of ROOT: its node (`wf.<runId>`, as the extension names it) and its agents,
// which hang under the run's node while their headers keep ROOT as their parent.
const RUN = 'wf-3b9e1c20';
const W = `wf.${RUN}`;
const W1 = `${ROOT}.b81f0e`;
const W2 = `${ROOT}.4c2a9d`;
const W3 = `${ROOT}.e6d730`;

export const DEMO_ROOT = ROOT;
export const DEMO_CHILD = D;

function node(n: Partial<TreeNode> & Pick<TreeNode, 'id' | 'origin' | 'depth' | 'status' | 'createdAt'>): TreeNode {
  return { tokens: { prompt: 0, completion: 0, cacheHit: 0 }, reports: 0, ...n };
}

export function demoNodes(now: number): TreeNode[] {
  const at = (min: number) => new Date(now - min * 60_000).toISOString();
  return [
    node({
      id: ROOT,
      origin: 'user',
      depth: 0,
      status: 'running',
      title: 'Fix the flaky store test',
      provider: 'deepseek',
      activity: 'waiting for children',
      activeSince: now - 95_000,
      createdAt: at(30),
      tokens: { prompt: 48_210, completion: 3_120, cacheHit: 41_900 },
      reports: 0,
      goal: { phase: 'active', roundsStarted: 3, maxGoalRounds: 10, armed: true, objective: 'Make the store test pass 100 times in a row' },
    }),
    node({
      id: B,
      parentId: ROOT,
      origin: 'subagent',
      depth: 1,
      status: 'settled',
      label: 'investigate-journal',
      provider: 'spawn',
      mode: 'continuable',
      lastStopReason: 'completed',
      createdAt: at(20),
      tokens: { prompt: 61_000, completion: 2_400, cacheHit: 52_300 },
      reports: 2,
    }),
    node({
      id: C,
      parentId: B,
      origin: 'subagent',
      depth: 2,
      status: 'settled',
      label: 'read-tree-files',
      provider: 'spawn',
      mode: 'one-shot',
      lastStopReason: 'completed',
      createdAt: at(18),
      tokens: { prompt: 12_400, completion: 800, cacheHit: 9_100 },
      reports: 0,
    }),
    node({
      id: D,
      parentId: ROOT,
      origin: 'subagent',
      depth: 1,
      status: 'running',
      label: 'write-test',
      provider: 'spawn',
      mode: 'continuable',
      activity: 'waiting for children',
      activeSince: now - 42_000,
      createdAt: at(12),
      tokens: { prompt: 23_800, completion: 1_900, cacheHit: 17_000 },
      reports: 1,
    }),
    node({
      id: E,
      parentId: D,
      origin: 'subagent',
      depth: 2,
      status: 'waiting',
      label: 'check-fsync',
      provider: 'spawn',
      mode: 'one-shot',
      activity: 'waiting for approval',
      activeSince: now - 12_000,
      createdAt: at(3),
      tokens: { prompt: 8_200, completion: 310, cacheHit: 6_000 },
    }),
    node({
      id: F,
      parentId: ROOT,
      origin: 'fork',
      depth: 0,
      status: 'interrupted',
      title: 'Try the WAL journal instead',
      provider: 'deepseek',
      lastStopReason: 'interrupted',
      createdAt: at(10),
      tokens: { prompt: 40_100, completion: 900, cacheHit: 39_800 },
    }),
    node({
      id: G,
      parentId: ROOT,
      origin: 'subagent',
      depth: 1,
      status: 'failed',
      label: 'bisect-commits',
      provider: 'spawn',
      mode: 'one-shot',
      lastStopReason: 'error',
      createdAt: at(8),
      tokens: { prompt: 5_000, completion: 120, cacheHit: 0 },
    }),
    node({
      id: W,
      parentId: ROOT,
      origin: 'subagent',
      depth: 1,
      status: 'running',
      title: 'review-store-modules',
      label: 'review-store-modules',
      activity: 'phase: review',
      activeSince: now - 64_000,
      createdAt: at(6),
      kind: 'workflow',
      workflow: {
        runId: RUN,
        name: 'review-store-modules',
        description: 'Review each store module for the crash window, then summarise.',
        phase: 'review',
        phases: ['scan', 'review'],
        logs: ['found 3 modules', 'journal.ts: reviewed'],
        agents: 3,
        running: 2,
        status: 'running',
      },
    }),
    node({
      id: W1,
      parentId: W,
      origin: 'subagent',
      depth: 1,
      status: 'settled',
      label: 'journal.ts',
      provider: 'spawn',
      mode: 'one-shot',
      lastStopReason: 'completed',
      createdAt: at(5.9),
      tokens: { prompt: 7_300, completion: 420, cacheHit: 6_400 },
    }),
    node({
      id: W2,
      parentId: W,
      origin: 'subagent',
      depth: 1,
      status: 'running',
      label: 'catalog.ts',
      provider: 'spawn',
      mode: 'one-shot',
      activity: 'tool read_file',
      activeSince: now - 20_000,
      createdAt: at(5.9),
      tokens: { prompt: 6_900, completion: 150, cacheHit: 6_100 },
    }),
    node({
      id: W3,
      parentId: W,
      origin: 'subagent',
      depth: 1,
      status: 'running',
      label: 'reconcile.ts',
      provider: 'spawn',
      mode: 'one-shot',
      activity: 'thinking',
      activeSince: now - 8_000,
      createdAt: at(5.9),
      tokens: { prompt: 7_100, completion: 60, cacheHit: 6_300 },
    }),
    node({
      id: H,
      origin: 'user',
      depth: 0,
      status: 'idle',
      title: 'Explain the CLI options',
      provider: 'deepseek',
      lastStopReason: 'completed',
      createdAt: at(90),
      tokens: { prompt: 15_300, completion: 2_200, cacheHit: 11_000 },
    }),
    node({
      id: I,
      parentId: H,
      origin: 'subagent',
      depth: 1,
      status: 'settled',
      label: 'summarise-docs',
      provider: 'spawn',
      mode: 'one-shot',
      lastStopReason: 'completed',
      createdAt: at(85),
      tokens: { prompt: 9_800, completion: 1_100, cacheHit: 7_700 },
    }),
    node({
      id: J,
      parentId: H,
      origin: 'fork',
      depth: 0,
      status: 'idle',
      title: 'Explain the CLI options (short)',
      provider: 'deepseek',
      lastStopReason: 'completed',
      createdAt: at(80),
      tokens: { prompt: 16_000, completion: 700, cacheHit: 15_300 },
    }),
  ];
}

export function demoTranscript(now: number): TranscriptEntry[] {
  const at = (s: number) => new Date(now - s * 1000).toISOString();
  return [
    { kind: 'turn', seq: 0, at: at(1700), phase: 'start' },
    {
      kind: 'user',
      seq: 1,
      at: at(1700),
      source: 'user',
      text: 'The store test `reopens after a crash` fails about 1 run in 20. Find out why, fix it, and add a regression test.',
    },
    {
      kind: 'assistant',
      seq: 2,
      at: at(1690),
      reasoning: 'The test kills the writer between the tree write and the catalog write. Reconcile must index tree files the catalog does not know.',
      text: 'I will read the journal replay first.',
      toolCalls: [{ id: 'call_1', name: 'read_file', arguments: JSON.stringify({ path: 'src/core/store/journal.ts', startLine: 1, endLine: 120 }) }],
      usage: { promptTokens: 9_800, completionTokens: 140, cacheHitTokens: 8_960 },
    },
    {
      kind: 'tool',
      seq: 3,
      at: at(1689),
      callId: 'call_1',
      name: 'read_file',
      isError: false,
      content:
        'export async function replay(file: string): Promise<Record[]> {\n  const text = await fs.promises.readFile(file, "utf8");\n  return text.split("\\n").filter(Boolean).map(decodeRecord);\n}\n',
    },
    {
      kind: 'assistant',
      seq: 4,
      at: at(1600),
      text: 'Two questions can run in parallel: where the race is, and how to reproduce it reliably.',
      toolCalls: [
        {
          id: 'call_2',
          name: 'spawn_subagent',
          arguments: JSON.stringify({ label: 'investigate-journal', task: 'Find the window in which a crash loses a session.', mode: 'continuable' }),
        },
        {
          id: 'call_3',
          name: 'spawn_subagent',
          arguments: JSON.stringify({ label: 'write-test', task: 'Write a test that kills the writer mid-append 50 times.', mode: 'continuable' }),
        },
      ],
      usage: { promptTokens: 11_200, completionTokens: 210, cacheHitTokens: 10_100 },
    },
    { kind: 'tool', seq: 5, at: at(1599), callId: 'call_2', name: 'spawn_subagent', isError: false, content: `Started investigate-journal (${B}).` },
    { kind: 'tool', seq: 6, at: at(1599), callId: 'call_3', name: 'spawn_subagent', isError: false, content: `Started write-test (${D}).` },
    {
      kind: 'user',
      seq: 7,
      at: at(900),
      source: 'subagent-report',
      fromSession: B,
      text: 'Found it: `reconcile()` only indexes sessions the catalog lists.\n\n- the tree file is written first, the catalog row second;\n- a crash between the two leaves a tree file nobody lists;\n- the next open never sees it.',
    },
    {
      kind: 'user',
      seq: 8,
      at: at(600),
      source: 'subagent-settled',
      fromSession: B,
      text: '[subagent investigate-journal settled: completed]\nThe race is in reconcile(): orphan tree files are skipped. Index them at open; the fix is one loop and a test.',
    },
    { kind: 'turn', seq: 9, at: at(590), phase: 'end', stopReason: 'interrupted' },
    { kind: 'turn', seq: 10, at: at(300), phase: 'start' },
    { kind: 'user', seq: 11, at: at(300), source: 'user', text: 'Go ahead with the fix, keep the test.' },
    {
      kind: 'assistant',
      seq: 12,
      at: at(280),
      text: 'Plan:\n\n1. Make `reconcile()` index **orphan** tree files.\n2. Keep the catalog write *after* the tree write.\n3. Run the crash test 50 times.\n\n```ts\nfor (const file of orphans) catalog.add(headerOf(file));\n```\n\nBackground: https://www.sqlite.org/atomiccommit.html',
      toolCalls: [
        {
          id: 'call_4',
          name: 'edit_file',
          arguments: JSON.stringify({
            path: 'src/core/store/store.ts',
            edits: [{ find: 'for (const id of listed)', replace: 'for (const id of [...listed, ...orphans])' }],
          }),
        },
      ],
      usage: { promptTokens: 14_900, completionTokens: 380, cacheHitTokens: 13_000 },
    },
    {
      kind: 'tool',
      seq: 13,
      at: at(279),
      callId: 'call_4',
      name: 'edit_file',
      isError: true,
      content: 'The text to replace was not found in src/core/store/store.ts.',
    },
  ];
}

/** The subagent write-test's own log: the runtime's delegation notice, its task, a report. */
export function demoChildTranscript(now: number): TranscriptEntry[] {
  const at = (s: number) => new Date(now - s * 1000).toISOString();
  return [
    { kind: 'turn', seq: 0, at: at(720), phase: 'start' },
    {
      kind: 'user',
      seq: 1,
      at: at(720),
      source: 'delegation',
      text: `[Arbor runtime] You are a subagent (depth 1) working for session ${ROOT}. Your permissions were fixed when you were started; they cannot be widened. Actions that need approval go to the user, tagged with your id.`,
    },
    { kind: 'user', seq: 2, at: at(720), source: 'user', text: 'Write a test that kills the writer mid-append 50 times and checks that no session is lost.' },
    {
      kind: 'assistant',
      seq: 3,
      at: at(700),
      text: 'Starting with a fork-and-kill helper.',
      toolCalls: [{ id: 'c1', name: 'report', arguments: JSON.stringify({ text: 'Helper written; the test loops 50 times.' }) }],
    },
    { kind: 'tool', seq: 4, at: at(699), callId: 'c1', name: 'report', isError: false, content: 'Delivered to the parent.' },
    { kind: 'marker', seq: 5, at: at(600), text: 'context compacted' },
    {
      kind: 'user',
      seq: 6,
      at: at(600),
      source: 'user',
      compacted: true,
      text: 'Summary: the helper spawns a writer, kills it with SIGKILL after a random delay, reopens the store and counts sessions.',
    },
  ];
}

/** A tiny host for the harness's demo: answers the webview's requests the way the extension would. */
export function demoRespond(msg: WebviewToHost, now: number): HostToWebview[] {
  switch (msg.type) {
    case 'session/select':
      return [
        {
          type: 'transcript/reset',
          sessionId: msg.sessionId,
          entries: msg.sessionId === ROOT ? demoTranscript(now) : msg.sessionId === D ? demoChildTranscript(now) : [],
          hasMore: false,
        },
      ];
    case 'chat/send':
      return [
        {
          type: 'transcript/append',
          sessionId: msg.sessionId ?? ROOT,
          entries: [{ kind: 'user', seq: 1000 + Math.floor(Math.random() * 1e6), at: new Date().toISOString(), source: 'user', text: msg.text }],
        },
        { type: 'request/done', id: msg.id, ok: true, sessionId: msg.sessionId ?? ROOT },
      ];
    case 'agent/interrupt':
      return [{ type: 'request/done', id: msg.id, ok: false, error: `Session ${msg.sessionId} is not running.` }];
    case 'workflow/cancel':
      return [{ type: 'request/done', id: msg.id, ok: false, error: 'The demo host runs no workflows.' }];
    case 'session/fork':
    case 'session/new':
      return [{ type: 'request/done', id: msg.id, ok: false, error: 'The demo host cannot create sessions.' }];
    case 'approval/answer':
      return [{ type: 'approval/resolved', requestId: msg.requestId, decision: msg.decision }];
    case 'transcript/more':
      return [{ type: 'request/done', id: msg.id, ok: true, sessionId: msg.sessionId, entries: [], hasMore: false }];
    default:
      // Every other request (goal/start, …) is answered, so no promise in the webview waits for ever.
      return 'id' in msg && typeof msg.id === 'string'
        ? [{ type: 'request/done', id: msg.id, ok: false, error: `The demo host does not do “${msg.type}”; run the extension for that.` }]
        : [];
  }
}

export function demoScene(now: number): HostToWebview[] {
  return [
    {
      type: 'state/snapshot',
      nodes: demoNodes(now),
      selected: ROOT,
      settings: { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'deepseek-chat' },
      approvals: [],
    },
    { type: 'transcript/reset', sessionId: ROOT, entries: demoTranscript(now), hasMore: false },
    { type: 'stream/delta', sessionId: ROOT, kind: 'text', delta: 'The edit missed; I will re-read `store.ts` around ' },
    { type: 'stream/delta', sessionId: ROOT, kind: 'text', delta: '`reconcile()` and retry while **write-test** runs.' },
    {
      type: 'approval/requested',
      prompt: {
        requestId: 'appr-1',
        sessionId: E,
        lineage: [E, D, ROOT],
        tool: 'run_command',
        summary: "npm test -- --grep 'reopens after a crash' --repeat 50",
        reason: 'Running commands needs approval in the workspace-write sandbox.',
      },
    },
  ];
}
