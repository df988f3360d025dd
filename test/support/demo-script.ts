import type { ChatBody, Reply } from './model-server';

// The demo's scripted model: `npm start -- --demo` points the extension at the test model
// server with this responder, so anyone can see the tree grow (spawn, report, settlement,
// fork, follow-up, interrupt) without an API key. It reacts to what the last message says.
//
// Pacing is the demo's alone: `demoResponder({ stepMs })` (what `npm start` serves) spreads the
// steps a person watches — a workflow agent's answer, a goal round, a surveyor's step — over
// about `stepMs` each, so they can be followed and stopped mid-way. `demoReply(body)` (the tests
// and UI flows) answers at the scripted speed. The model server stops streaming as soon as the
// client leaves (a Stop), so the next prompt is answered at once.

type Msg = ChatBody['messages'][number];

const isChild = (msgs: Msg[]) => msgs.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));
const text = (m: Msg | undefined) => String(m?.content ?? '');
const lastUser = (msgs: Msg[]) => [...msgs].reverse().find((m) => m.role === 'user');

const SLOW = 'I am working through a long analysis, one careful step at a time. '.repeat(40);

/** A goal scene's button: a new conversation with this objective as its goal, armed (`arbor.chat.examplePrompts`). */
export interface DemoGoalPrompt {
  prompt: string;
  goalRounds: number;
}

/** The goal scene: a new conversation whose goal runs two rounds by itself, then blocks at round-limit. */
export const DEMO_GOAL: DemoGoalPrompt = { prompt: 'tidy the workspace', goalRounds: 2 };

/**
 * The demo's scenes, listed up front: an empty panel offers them as buttons
 * (`arbor.chat.examplePrompts`): children, fork, interrupt, workflow, both approvals, goal.
 */
export const DEMO_PROMPTS: readonly (string | DemoGoalPrompt)[] = [
  'survey the workspace',
  'fork a reviewer',
  'start a long task',
  'run a workflow',
  'run the tests',
  'edit the settings',
  'try two ways',
  DEMO_GOAL,
];

/**
 * The worktree scenes (issue 24). "try two ways": two children, each in its own git worktree,
 * rewrite the same function of src/greet.js differently; the user reviews and applies one, and
 * the other then conflicts (or is discarded). "two editors" (in the help only: the panel shows at
 * most 8 buttons): two in-place children each edit a different file, so one child's edits can be
 * rewound from its node while the other's stay.
 */
export const DEMO_WAYS = {
  a: `// A small function, now with the empty name handled.\nfunction greet(name) {\n  if (!name) return 'Hello, stranger!';\n  return \`Hello, \${name}!\`;\n}\n\nmodule.exports = { greet };\n`,
  b: `// A small function, now with the empty name handled.\nfunction greet(name) {\n  const who = String(name ?? '').trim() || 'world';\n  return \`Hello, \${who}!\`;\n}\n\nmodule.exports = { greet };\n`,
} as const;

/** "two editors": each child's one file and its new content. */
export const DEMO_EDITORS = {
  readme: {
    path: 'README.md',
    content:
      '# Sample workspace\n\nA tiny project for trying Arbor: ask the agent to survey it, fork a reviewer, or start a\nlong task and interrupt it from the tree.\n\nRun the tests with `node src/greet.test.js`.\n',
  },
  tests: {
    path: 'src/greet.test.js',
    content:
      "const assert = require('node:assert');\nconst { greet } = require('./greet');\n\nassert.strictEqual(greet('Ada'), 'Hello, Ada!');\nassert.strictEqual(greet('Grace'), 'Hello, Grace!');\nconsole.log('ok');\n",
  },
} as const;

/** What each example button reads (the webview's label for a goal prompt, see ExamplePrompts.svelte). */
export const DEMO_PROMPT_LABELS: readonly string[] = DEMO_PROMPTS.map((p) => (typeof p === 'string' ? p : `Goal: ${p.prompt} (${p.goalRounds} rounds)`));

// Menu names as in package.json (`Fork Conversation`, `Interrupt Agent`, `Send Message to Agent`).
export const DEMO_HELP =
  'Arbor demo (scripted model). Try: "survey the workspace" (a continuable subagent reports, then settles), ' +
  '"fork a reviewer" (a forked one-shot child reuses this conversation), "start a long task" (a slow child: right-click its node → Interrupt Agent), ' +
  '"run a workflow" (a script fans out four children in two phases under a workflow node: right-click it → Cancel Workflow), ' +
  'or right-click a message → Fork Conversation. Right-click a settled child → Send Message to Agent (or select it and type) to resume it. ' +
  'Worktrees: "try two ways" (two children, each in its own git worktree, rewrite src/greet.js differently: select one → Review changes, Apply; ' +
  'the other then conflicts: Discard it), or the Try N ways… button on one of your messages, to compare the ways side by side; ' +
  '"two editors" (two children edit README.md and src/greet.test.js in place: rewind one child\'s edits from its node, the other\'s stay). ' +
  'Approvals: "run the tests" (asks to run npm test outside the sandbox) and "edit the settings" (asks to write .vscode/settings.json, with a diff). ' +
  'Goals: the "Goal: tidy the workspace" button of an empty panel (or right-click a conversation → Set Goal, limit 2): two rounds run by themselves, ' +
  'then it blocks at round-limit; Raise limit and Resume in the goal bar. Stop (or Pause) halts any scene; the next message is answered as usual.';

/** The workflow scene's script: two phases, four children (three in parallel, then a summary). */
export const DEMO_WORKFLOW = [
  'phase("review");',
  'log("reviewing " + args.parts.length + " parts");',
  'const notes = await parallel(args.parts.map((p) => () => agent("WORKFLOW: review the " + p, { label: p })));',
  'phase("summarise");',
  'const summary = await agent("WORKFLOW: summarise these notes: " + notes.join(" | "), { label: "summary" });',
  'return { parts: args.parts, notes, summary };',
].join('\n');

/** The goal scene: each round notes its progress with the `goal` tool, then answers. */
export const DEMO_GOAL_ROUND = /^\[Goal round (\d+) of (\d+)\]/;

/** The approval scene's protected write: the sample workspace's settings, one value changed. */
export const DEMO_SETTINGS = '{\n  "editor.tabSize": 4,\n  "files.trimTrailingWhitespace": true\n}\n';

/** A scripted step and how much of the demo's pace it takes (1: one `stepMs`; none: unpaced). */
type Step = Reply & { pace?: number };

export interface DemoPacing {
  /** About how long a paced step takes, in ms; 0 (the default) answers at the scripted speed. */
  stepMs?: number;
}

/** The demo's pace for `npm start` (ms per paced step); `ARBOR_DEMO_STEP_MS` changes it, 0 turns it off. */
export const DEMO_STEP_MS = 2500;

/** The scripted reply to `body`, paced as `pacing` says (unpaced by default). */
export function demoReply(body: ChatBody, pacing: DemoPacing = {}): Reply {
  const { pace, ...reply } = scripted(body);
  return pace && pacing.stepMs ? paced(reply, pace * pacing.stepMs) : reply;
}

/** A model-server responder for the demo with its pacing (see the top of this file). */
export function demoResponder(pacing: DemoPacing = {}): (body: ChatBody) => Reply {
  return (body) => demoReply(body, pacing);
}

/**
 * `reply` stretched over about `ms`: streamed text and reasoning get the chunk delay that makes
 * the whole stream last `ms`; a reply that streams nothing (tool calls only) waits `ms` first.
 */
export function paced(reply: Reply, ms: number): Reply {
  const size = reply.chunkSize ?? 8;
  const chunks = Math.ceil((reply.text ?? '').length / size) + Math.ceil((reply.reasoning ?? '').length / size);
  if (chunks === 0) return { ...reply, delayMs: Math.max(reply.delayMs ?? 0, ms) };
  return { ...reply, chunkDelayMs: Math.max(reply.chunkDelayMs ?? 0, Math.round(ms / chunks)) };
}

/** How long `reply` takes to stream, by its own delays (what the pacing tests measure). */
export function streamMs(reply: Reply): number {
  const size = reply.chunkSize ?? 8;
  const chunks = Math.ceil((reply.text ?? '').length / size) + Math.ceil((reply.reasoning ?? '').length / size);
  return (reply.delayMs ?? 0) + chunks * (reply.chunkDelayMs ?? 0);
}

/** A child of the worktree scenes: it writes its one file, then says what it did. */
function sceneChild(task: string, last: Msg): Step | undefined {
  const file: Record<string, { path: string; content: string }> = {
    'WAY A': { path: 'src/greet.js', content: DEMO_WAYS.a },
    'WAY B': { path: 'src/greet.js', content: DEMO_WAYS.b },
    'EDIT README': DEMO_EDITORS.readme,
    'EDIT TESTS': DEMO_EDITORS.tests,
  };
  const key = Object.keys(file).find((k) => task.startsWith(`${k}:`));
  if (!key) return undefined;
  const f = file[key];
  if (last.role === 'tool')
    return { text: `${key.startsWith('WAY') ? 'Rewrote' : 'Edited'} ${f.path}: ${task.slice(key.length + 2)}`, chunkSize: 6, chunkDelayMs: 20, pace: 0.5 };
  return { toolCalls: [{ name: 'write_file', arguments: { path: f.path, content: f.content } }], pace: 0.5 };
}

function scripted(body: ChatBody): Step {
  const msgs = body.messages;
  const last = msgs[msgs.length - 1];
  const said = text(last);
  const system = text(msgs[0]);
  if (system.startsWith('You compact')) return { text: 'Summary: the user explored the Arbor demo (subagents, forks, reports).' };

  if (isChild(msgs)) {
    if (last.role === 'tool' && said.startsWith('Reported to'))
      return { text: 'Survey done: the workspace has a README and a src folder; nothing looks broken.', chunkSize: 6, chunkDelayMs: 25, pace: 0.5 };
    if (last.role === 'tool' && last.tool_call_id?.startsWith('call_'))
      return { toolCalls: [{ name: 'report', arguments: { message: 'Listed the files; now reading the README.', mode: 'quiet' } }], pace: 0.5 };
    const task = text(lastUser(msgs));
    const worktreeScene = sceneChild(task, last);
    if (worktreeScene) return worktreeScene;
    if (task.startsWith('SURVEY'))
      return { reasoning: 'Start by listing the files.', toolCalls: [{ name: 'list_files', arguments: { path: '.', recursive: true } }], pace: 0.5 };
    if (task.startsWith('LONG')) return { text: SLOW, chunkSize: 4, chunkDelayMs: 60 };
    if (task.startsWith('WORKFLOW')) return { text: `Checked: ${task.slice(10, 60)} — no issues found.`, chunkSize: 4, chunkDelayMs: 40, pace: 1 };
    if (task.startsWith('REVIEW'))
      return {
        text: 'Review (from a fork that already knew the conversation): the plan is sound; add a test for the edge case.',
        chunkSize: 6,
        chunkDelayMs: 20,
        pace: 0.5,
      };
    return { text: `Follow-up received: "${task.slice(0, 80)}". Done.`, chunkSize: 6, chunkDelayMs: 20 };
  }

  if (last.role === 'tool' && said.startsWith('Progress noted')) {
    const round = DEMO_GOAL_ROUND.exec(text(lastUser(msgs)));
    return { text: `Round ${round?.[1] ?? '?'} done: one more step toward the goal.`, chunkSize: 6, chunkDelayMs: 30, pace: 0.5 };
  }
  const asked = text(lastUser(msgs)).toLowerCase();
  if (last.role === 'tool' && asked.includes('try two ways'))
    return {
      text: 'Both ways are done, each in its own worktree: select a child, Review changes, then Apply the one you like. The other changed the same lines, so applying it too shows a conflict: Discard it (or Keep branch).',
    };
  if (last.role === 'tool' && asked.includes('two editors'))
    return { text: "Both editors are done: one changed README.md, the other src/greet.test.js. Rewind one child's edits from its node; the other's stay." };
  if (last.role === 'tool') {
    if (said.includes('"runId"')) return { text: 'The workflow finished: its node in the tree shows the phases, the log and the four agents it ran.' };
    const refused = /approval was refused by the user, who said: "(.*)"/.exec(said);
    if (refused) return { text: `Understood, I left it as it is. You said: "${refused[1]}".` };
    if (said.includes('approval was refused')) return { text: 'Understood, I did not do it.' };
    if (said.includes('PreToolUse hook blocked'))
      return { text: "The workspace's hook refused `rm -rf` (see the hook line above); I left the build folder as it is." };
    if (said.startsWith('Exit code:')) return { text: `The tests ran (${said.split('\n')[0]}); the output is in the tool result above.` };
    if (said.startsWith('Overwrote') || said.startsWith('Created')) return { text: `Done: ${said}` };
    if (said.includes('"status": "started"'))
      return { text: 'Started it. It works on its own; you will see its report and its settlement notice here, and its node in the tree.' };
    if (said.includes('"answer"')) return { text: 'The fork answered (see its node in the tree, and the cache-hit % on it).' };
    return { text: 'Done.' };
  }
  if (said.startsWith('[subagent') && said.includes('settled'))
    return { text: 'A subagent settled. Its final answer is above; message it from its tree node to resume it from its log.' };
  if (said.startsWith('[report from subagent')) return { text: 'Noted the report.' };
  const round = DEMO_GOAL_ROUND.exec(said);
  if (round)
    return {
      reasoning: `Goal round ${round[1]}: pick the next step.`,
      toolCalls: [{ name: 'goal', arguments: { action: 'progress', note: `round ${round[1]}: took the next step` } }],
      pace: 0.5,
    };
  const lower = said.toLowerCase();
  if (lower.includes('try two ways'))
    return {
      toolCalls: [
        {
          name: 'subagent',
          arguments: { prompt: 'WAY A: handle an empty name in src/greet.js with "Hello, stranger!".', label: 'way-a', isolation: 'worktree' },
        },
        {
          name: 'subagent',
          arguments: { prompt: 'WAY B: handle an empty or blank name in src/greet.js with "Hello, world!".', label: 'way-b', isolation: 'worktree' },
        },
      ],
    };
  if (lower.includes('two editors'))
    return {
      toolCalls: [
        { name: 'subagent', arguments: { prompt: 'EDIT README: say how to run the tests.', label: 'readme-editor' } },
        { name: 'subagent', arguments: { prompt: 'EDIT TESTS: add a second greeting test.', label: 'test-editor' } },
      ],
    };
  // The approval scene: a command asked to run outside the OS sandbox (the only commands that
  // ask) and a write to a protected path (.vscode), whose card shows the diff against the current file.
  if (lower.includes('run the tests')) {
    return {
      toolCalls: [
        {
          name: 'run_command',
          arguments: { command: 'npm test', outsideSandbox: true, justification: 'the tests download fixtures, and the sandbox has no network' },
        },
      ],
    };
  }
  // The hook scene (decision 0057): the sample workspace's PreToolUse hook blocks `rm -rf`.
  if (lower.includes('clean the build')) return { toolCalls: [{ name: 'run_command', arguments: { command: 'rm -rf build' } }] };
  if (lower.includes('edit the settings')) return { toolCalls: [{ name: 'write_file', arguments: { path: '.vscode/settings.json', content: DEMO_SETTINGS } }] };
  if (lower.includes('workflow'))
    return {
      toolCalls: [
        {
          name: 'workflow',
          arguments: {
            script: DEMO_WORKFLOW,
            meta: { name: 'review-parts', description: 'Review three parts in parallel, then summarise.' },
            args: { parts: ['parser', 'store', 'webview'] },
            concurrency: 3,
          },
        },
      ],
    };
  if (lower.includes('survey'))
    return {
      toolCalls: [
        { name: 'subagent', arguments: { prompt: 'SURVEY: list the workspace files and report what you find.', label: 'surveyor', mode: 'continuable' } },
      ],
    };
  if (lower.includes('fork')) return { toolCalls: [{ name: 'subagent_fork', arguments: { prompt: 'REVIEW: review the plan so far.', label: 'reviewer' } }] };
  if (lower.includes('long'))
    return { toolCalls: [{ name: 'subagent', arguments: { prompt: 'LONG: analyse everything slowly.', label: 'long-task', mode: 'continuable' } }] };
  return { text: DEMO_HELP, chunkSize: 8, chunkDelayMs: 15 };
}
