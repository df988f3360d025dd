import assert from 'node:assert/strict';
import {
  DEMO_GOAL,
  DEMO_HELP,
  DEMO_PROMPT_LABELS,
  DEMO_PROMPTS,
  DEMO_STEP_MS,
  type DemoGoalPrompt,
  demoReply,
  demoResponder,
  paced,
  streamMs,
} from '../support/demo-script';
import type { ChatBody, Reply } from '../support/model-server';

// The demo's scripted model (`npm start -- --demo`): every scene its empty panel offers starts
// that scene, and pacing — a person can follow and stop each step — is the demo's alone.

const CHILD_INTRO = '[Arbor runtime] You are a subagent. Do the task below.';
const root = (...messages: ChatBody['messages']): ChatBody => ({ model: 'arbor-demo', messages: [{ role: 'system', content: 'You are Arbor.' }, ...messages] });
const child = (task: string, ...more: ChatBody['messages']): ChatBody => root({ role: 'user', content: CHILD_INTRO }, { role: 'user', content: task }, ...more);
const toolsOf = (r: Reply) => (r.toolCalls ?? []).map((c) => c.name);

/** The goal scene's first round, as the round driver words it. */
const goalRound = (n: number, of: number) => root({ role: 'user', content: `[Goal round ${n} of ${of}] ${DEMO_GOAL.prompt}` });

describe("demo: the scripted model's scenes", () => {
  // Each button of the empty panel and the first thing the scene does (the goal button starts
  // its conversation with round 1, which the model answers with the goal tool).
  const scenes: Record<string, { body: ChatBody; tools: string[] }> = {
    'survey the workspace': { body: root({ role: 'user', content: 'survey the workspace' }), tools: ['subagent'] },
    'fork a reviewer': { body: root({ role: 'user', content: 'fork a reviewer' }), tools: ['subagent_fork'] },
    'start a long task': { body: root({ role: 'user', content: 'start a long task' }), tools: ['subagent'] },
    'run a workflow': { body: root({ role: 'user', content: 'run a workflow' }), tools: ['workflow'] },
    'run the tests': { body: root({ role: 'user', content: 'run the tests' }), tools: ['run_command'] },
    'edit the settings': { body: root({ role: 'user', content: 'edit the settings' }), tools: ['write_file'] },
    'try two ways': { body: root({ role: 'user', content: 'try two ways' }), tools: ['subagent', 'subagent'] },
    [DEMO_GOAL.prompt]: { body: goalRound(1, DEMO_GOAL.goalRounds), tools: ['goal'] },
  };

  it('offers a button for every scene (children, fork, interrupt, workflow, both approvals, goal), each starting its scene', () => {
    const prompts = DEMO_PROMPTS.map((p) => (typeof p === 'string' ? p : p.prompt));
    assert.deepEqual([...prompts].sort(), Object.keys(scenes).sort());
    assert.ok(DEMO_PROMPTS.length <= 8, 'arbor.chat.examplePrompts shows at most 8');
    for (const [prompt, { body, tools }] of Object.entries(scenes)) assert.deepEqual(toolsOf(demoReply(body)), tools, prompt);
    // The goal button is a goal prompt (the panel sets it as a new conversation's goal), labelled so.
    const goal = DEMO_PROMPTS.find((p): p is DemoGoalPrompt => typeof p !== 'string');
    assert.deepEqual(goal, { prompt: 'tidy the workspace', goalRounds: 2 });
    assert.ok(DEMO_PROMPT_LABELS.includes('Goal: tidy the workspace (2 rounds)'));
    // The help names every scene's prompt.
    for (const p of prompts) assert.ok(DEMO_HELP.includes(`"${p}"`) || DEMO_HELP.includes(`"Goal: ${p}"`), `the help names "${p}"`);
    // A scene the buttons have no room for is named in the help.
    assert.ok(DEMO_HELP.includes('"two editors"'));
    assert.deepEqual(toolsOf(demoReply(root({ role: 'user', content: 'two editors' }))), ['subagent', 'subagent']);
  });

  it('answers anything else with the help, and a message after a stopped scene as usual', () => {
    assert.equal(demoReply(root({ role: 'user', content: 'hello' })).text, DEMO_HELP);
    // After Stop the history ends with the partial answer and the runtime's notice; the next prompt starts its scene.
    const next = root(
      { role: 'user', content: 'run a workflow' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_0_0', type: 'function', function: { name: 'workflow', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_0_0', content: 'The workflow was cancelled.' },
      { role: 'user', content: 'survey the workspace' },
    );
    assert.deepEqual(toolsOf(demoReply(next)), ['subagent']);
  });
});

describe('demo: pacing', () => {
  const workflowAgent = child('WORKFLOW: review the parser');
  const surveyStep = child('SURVEY: list the workspace files and report what you find.');
  const helpBody = root({ role: 'user', content: 'hello' });

  it('is off unless asked for: the tests and UI flows get the scripted speed', () => {
    for (const body of [workflowAgent, surveyStep, goalRound(1, 2), helpBody]) {
      assert.deepEqual(demoReply(body), demoReply(body, { stepMs: 0 }));
      assert.equal(demoReply(body).delayMs, undefined);
    }
    assert.ok(streamMs(demoReply(workflowAgent)) < 1_000, `a workflow agent streams in ${streamMs(demoReply(workflowAgent))} ms unpaced`);
  });

  it('makes a workflow agent and a goal round last about one step each', () => {
    const step = 3_000;
    const agent = demoReply(workflowAgent, { stepMs: step });
    assert.ok(Math.abs(streamMs(agent) - step) <= step * 0.2, `a workflow agent streams for ${streamMs(agent)} ms, want ≈ ${step}`);
    // A round is two replies: the goal tool's progress note, then the round's answer.
    const think = demoReply(goalRound(1, 2), { stepMs: step });
    const answer = demoReply(
      root(
        { role: 'user', content: `[Goal round 1 of 2] ${DEMO_GOAL.prompt}` },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1_0', type: 'function', function: { name: 'goal', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1_0', content: 'Progress noted.' },
      ),
      { stepMs: step },
    );
    assert.deepEqual(toolsOf(think), ['goal']);
    assert.match(answer.text ?? '', /^Round 1 done/);
    const round = streamMs(think) + streamMs(answer);
    assert.ok(Math.abs(round - step) <= step * 0.2, `a goal round takes ${round} ms, want ≈ ${step}`);
    // The help and the approval asks stay immediate: pacing is for the steps a person watches.
    assert.deepEqual(demoReply(helpBody, { stepMs: step }), demoReply(helpBody));
    assert.ok(DEMO_STEP_MS >= 1_000 && DEMO_STEP_MS <= 5_000, 'the demo paces its steps a few seconds each');
  });

  it('responder: the same replies, paced', () => {
    const respond = demoResponder({ stepMs: 2_000 });
    assert.deepEqual(respond(workflowAgent), demoReply(workflowAgent, { stepMs: 2_000 }));
  });

  it('paced(): a reply with nothing to stream waits first; one that streams spreads its chunks', () => {
    assert.equal(paced({ toolCalls: [{ name: 'x', arguments: {} }] }, 1_500).delayMs, 1_500);
    const spread = paced({ text: 'x'.repeat(80), chunkSize: 8 }, 1_000);
    assert.equal(spread.chunkDelayMs, 100);
    assert.equal(streamMs(spread), 1_000);
  });
});
