// An MCP server from the workspace, in real VS Code (issue 23, decision 0055):
//   01 the workspace's .mcp.json names server-everything (stdio, from node_modules): the panel
//      lists it waiting for an allow, and a notification asks (read in the notification center:
//      toasts are hidden in smoke-test mode)
//   02 Allow: the server starts; the panel lists it ready with its tool count
//   03 "echo through a child": the root delegates, the child calls mcp__everything__echo (allowed
//      up front by arbor.mcp.allowTools); the child's chat shows the call under its server, and
//      the server's answer reached the child's model
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/e2e/paths.mjs';
import { slack } from '../lib/patience.mjs';

const require = createRequire(import.meta.url);
const { demoReply } = require(join(repoRoot, 'out', 'test', 'support', 'demo-script.js'));

const ROOT = 'echo through a child';
const CHILD_TASK = 'MCP: echo hello from the tree';
const text = (m) => (typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? ''));

/** The root delegates; the child calls the MCP tool once, then says what the server answered. */
function reply(body) {
  const msgs = body.messages;
  const last = msgs.at(-1);
  const child = msgs.some((m) => m.role === 'user' && text(m).startsWith(CHILD_TASK));
  if (child) {
    if (last.role === 'tool') return { text: `The server said: ${text(last)}` };
    return { toolCalls: [{ name: 'mcp__everything__echo', arguments: { message: 'hello from the tree' } }] };
  }
  if (msgs.some((m) => m.role === 'user' && text(m) === ROOT)) {
    if (last.role === 'tool') return { text: 'The child used the MCP server.' };
    return { toolCalls: [{ name: 'subagent', arguments: { prompt: CHILD_TASK, label: 'mcp-child' } }] };
  }
  return demoReply(body);
}

export const flow = {
  name: 'mcp',
  settings: { 'arbor.mcp.allowTools': ['mcp__everything__echo'] },
  model: (model) => model.setFallback(reply),
  async run({ page, panel, chat, send, openPanel, command, model, folder, rowWith, selectRow, step, until, visible, say }) {
    const everything = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
    const server = panel.locator('[data-mcp-server="everything"]');

    await step('server-waits-for-allow', 90_000, async () => {
      writeFileSync(
        join(folder, '.mcp.json'),
        `${JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } }, null, 2)}\n`,
      );
      await openPanel();
      await visible(server, 'the server in the panel list', 30_000);
      await until(
        'the server to wait for the allow',
        20_000,
        async () => (await server.getAttribute('data-phase', { timeout: slack(2_000) })) === 'needs-allow',
      );
    });

    await step('allow-starts-it', 90_000, async () => {
      await command('Notifications: Show Notifications');
      const item = page.locator('.notifications-center .notification-list-item', { hasText: 'defines the MCP server "everything"' });
      await visible(item, 'the allow notification', 20_000);
      say(`  notification: ${((await item.locator('.notification-list-item-message').textContent({ timeout: slack(5_000) })) ?? '').trim()}`);
      await item.locator('.monaco-button', { hasText: 'Allow' }).click({ timeout: slack(5_000) });
      await until('the server to be ready', 45_000, async () => (await server.getAttribute('data-phase', { timeout: slack(2_000) })) === 'ready');
      const line = ((await server.textContent({ timeout: slack(5_000) })) ?? '').replace(/\s+/g, ' ').trim();
      say(`  panel: ${line}`);
      if (!/ready, \d+ tools/.test(line)) throw new Error(`the server row says ${JSON.stringify(line)}`);
    });

    await step('child-calls-the-tool', 120_000, async () => {
      await send(ROOT);
      await visible(rowWith('mcp-child', 'settled'), "'mcp-child' settled", 60_000);
      const childAnswer = model.requests.find((r) => r.body.messages.at(-1)?.role === 'tool' && r.body.messages.some((m) => text(m).startsWith(CHILD_TASK)));
      const toolText = childAnswer ? text(childAnswer.body.messages.at(-1)) : '';
      say(`  the child's tool result: ${toolText.slice(0, 120)}`);
      if (!/hello from the tree/.test(toolText)) throw new Error(`the child's tool result was ${JSON.stringify(toolText.slice(0, 300))}`);
      await selectRow('mcp-child');
      const call = chat.locator('.tool', { hasText: 'echo' }).first();
      await visible(call, "the child's MCP call in its chat", 20_000);
      const badge = ((await call.locator('.mcp-server').textContent({ timeout: slack(5_000) })) ?? '').trim();
      if (badge !== 'everything') throw new Error(`the call shows the server ${JSON.stringify(badge)}`);
    });
  },
};
