// Agents defined in files and project instructions (issue 23, decision 0056), in real VS Code:
//   01 the demo's project files (media/demo-project: an AGENTS.md and a 'reviewer' agent file, what
//      `npm start` adds to the sample workspace) copied in: the Project section lists both
//   02 a second agent file, 'lead' (tools Task, Read, Grep, Glob), written into the workspace:
//      the list shows it without a reload (the host's file watcher)
//   03 Start on 'lead': a new conversation named 'lead' is selected; asked for a review, lead
//      delegates to 'reviewer' by name; the tree shows 'reviewer' under 'lead'; the reviewer's
//      request carried its persona, the instructions, and only the read tools both files allow
//   (The lead will add a hook blocking one command here.)
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';

const require = createRequire(import.meta.url);
const { demoReply } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const LEAD = [
  '---',
  'name: lead',
  'description: Leads a change in this workspace and asks the reviewer agent to check it.',
  'tools: Task, Read, Grep, Glob',
  '---',
  'You are LEAD-1: plan the change, then ask the reviewer agent (subagent with agent "reviewer") to check it.',
  '',
].join('\n');
const ASK = 'ask the reviewer about greet.js';
const REVIEW = 'Review: src/greet.js has no test for an empty name.';

const system = (body) => String(body.messages[0]?.content ?? '');
const toolNames = (body) => (body.tools ?? []).map((t) => t.function.name);

/** The lead delegates to the reviewer by name; the reviewer answers; anything else is the demo's. */
function reply(body) {
  const last = body.messages.at(-1);
  if (system(body).includes('You are the reviewer of this small workspace')) return { text: REVIEW, chunkSize: 6, chunkDelayMs: 15 };
  if (system(body).includes('You are LEAD-1')) {
    if (last.role === 'tool') return { text: 'The reviewer answered: add a test for an empty name.' };
    return { toolCalls: [{ name: 'subagent', arguments: { agent: 'reviewer', prompt: 'Review src/greet.js for bugs and missing tests.' } }] };
  }
  return demoReply(body);
}

export const flow = {
  name: 'agent-files',
  model: (model) => model.setFallback(reply),
  async run({ panel, chat, row, rowIds, send, openPanel, step, until, visible, say, model, folder }) {
    const project = panel.locator('section.project');
    const agentRow = (name) => project.locator('.agents li', { has: panel.locator('.name', { hasText: new RegExp(`^${name}$`) }) });

    await step('project-section-lists-the-demo-files', 60_000, async () => {
      cpSync(join(repoRoot, 'media', 'demo-project'), folder, { recursive: true });
      await openPanel();
      await visible(project, 'the Project section (the sample has an AGENTS.md and an agent file)', 20_000);
      await project.locator('button.head').click();
      await visible(project.locator('.files li', { hasText: 'AGENTS.md' }), 'AGENTS.md among the instructions in effect', 10_000);
      await visible(agentRow('reviewer'), "the 'reviewer' agent", 10_000);
    });

    await step('a-new-agent-file-appears', 45_000, async () => {
      mkdirSync(join(folder, '.arbor', 'agents'), { recursive: true });
      writeFileSync(join(folder, '.arbor', 'agents', 'lead.md'), LEAD);
      await visible(agentRow('lead'), "the 'lead' agent listed after its file was written", 30_000);
    });

    await step('start-lead-which-delegates-to-reviewer', 90_000, async () => {
      await agentRow('lead').locator('button.start').click();
      await until(
        "the chat to show the conversation 'lead'",
        20_000,
        async () => (await chat.locator('.head .name').first().textContent({ timeout: 2_000 }))?.trim() === 'lead',
      );
      await send(ASK);
      await visible(row('reviewer'), "the child 'reviewer' in the tree", 30_000);
      await visible(chat.locator('article', { hasText: 'The reviewer answered' }).last(), "lead's answer after the reviewer's", 30_000);
      const ids = await rowIds();
      const lead = ids.find((id) => id && !id.includes('.'));
      const child = ids.find((id) => id?.startsWith(`${lead}.`));
      if (!child) throw new Error(`no child row under lead (rows: ${ids.join(', ')})`);
      const reviewerReq = model.requests.find((r) => system(r.body).includes('You are the reviewer of this small workspace'));
      if (!reviewerReq) throw new Error('the reviewer never asked the model');
      const tools = toolNames(reviewerReq.body);
      say(`  reviewer's tools: ${tools.join(', ')}`);
      if (tools.join(',') !== 'list_files,read_file,search_files') throw new Error(`the reviewer got tools ${tools.join(', ')}`);
      if (!system(reviewerReq.body).includes('Sample workspace rules')) throw new Error("the reviewer's system prompt lacks the workspace's AGENTS.md");
      const leadReq = model.requests.find((r) => system(r.body).includes('You are LEAD-1'));
      if (!toolNames(leadReq.body).includes('subagent') || toolNames(leadReq.body).includes('run_command'))
        throw new Error(`lead's tools: ${toolNames(leadReq.body).join(', ')}`);
    });
  },
};
