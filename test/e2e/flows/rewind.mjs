// Checkpoints and rewind (issue 24 part 1, decision 0059), in real VS Code:
//   01 asked to "let a helper write two files", the scripted root delegates to a child 'helper'
//      that writes helper-a.txt and helper-b.txt; the root then writes root.txt itself
//   02 select 'helper', Rewind… on its task message: choose Files, this agent's changes, Preview:
//      both files are listed with their diff; nothing is written yet
//   03 Apply rewind: the helper's two files are gone, the root's root.txt stays
//   04 Undo rewind: its preview, then apply: the helper's files are back
//   05 the helper's transcript tab (Open Transcript): right-click its task message → Rewind…, the
//      same preview, applied: the helper's files are gone again, the root's stays
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const TASK = 'HELPER: write two files';
const isChild = (body) => body.messages.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));

function reply(body) {
  const last = body.messages.at(-1);
  if (isChild(body)) {
    if (last.role === 'tool') return { text: 'Wrote helper-a.txt and helper-b.txt.' };
    return {
      toolCalls: [
        { name: 'write_file', arguments: { path: 'helper-a.txt', content: 'alpha from the helper\n' } },
        { name: 'write_file', arguments: { path: 'helper-b.txt', content: 'beta from the helper\n' } },
      ],
    };
  }
  if (last.role === 'tool' && String(last.content).includes('Created root.txt')) return { text: 'The helper wrote its two files; I wrote root.txt.' };
  if (last.role === 'tool') return { toolCalls: [{ name: 'write_file', arguments: { path: 'root.txt', content: 'from the root\n' } }] };
  return { toolCalls: [{ name: 'subagent', arguments: { prompt: TASK, label: 'helper' } }] };
}

export const flow = {
  name: 'rewind',
  model: (model) => model.setFallback(reply),
  async run({ panel, tab, chat, row, send, openPanel, selectRow, contextMenu, step, until, visible, say, folder }) {
    const file = (name) => join(folder, name);
    const rewind = panel.locator('section.rewind');

    await step('a-helper-writes-two-files', 60_000, async () => {
      await openPanel();
      await send('let a helper write two files');
      await visible(row('helper'), "the child 'helper' in the tree", 30_000);
      await visible(chat.locator('article', { hasText: 'I wrote root.txt' }).last(), "the root's answer", 30_000);
      for (const f of ['helper-a.txt', 'helper-b.txt', 'root.txt']) if (!existsSync(file(f))) throw new Error(`${f} was not written`);
    });

    await step('rewind-preview-of-the-helper', 40_000, async () => {
      await selectRow('helper');
      const task = chat.locator('article', { hasText: TASK }).first();
      await visible(task, "the helper's task message", 10_000);
      await task.hover();
      await task.locator('button.rewind').click();
      await visible(rewind, 'the rewind panel', 10_000);
      await rewind.locator('input[name="rewind-what"][value="files"]').check();
      await rewind.locator('vscode-button', { hasText: 'Preview' }).click();
      await visible(rewind.locator('li.file[data-path="helper-a.txt"]'), 'helper-a.txt in the preview', 15_000);
      await visible(rewind.locator('li.file[data-path="helper-b.txt"]'), 'helper-b.txt in the preview', 5_000);
      const diff = await rewind.locator('li.file[data-path="helper-a.txt"] pre.diff').textContent({ timeout: 5_000 });
      say(`  diff of helper-a.txt: ${JSON.stringify(diff)}`);
      if (!diff?.includes('-alpha from the helper')) throw new Error(`the preview's diff is ${JSON.stringify(diff)}`);
      if ((await rewind.locator('li.file').count()) !== 2) throw new Error('the preview lists files the helper did not change');
      if (!existsSync(file('helper-a.txt'))) throw new Error('the preview wrote something');
    });

    await step('apply-the-rewind', 30_000, async () => {
      await rewind.locator('vscode-button.apply').click();
      await visible(rewind.locator('.done', { hasText: '2 file(s) rewound' }), 'the rewind done', 15_000);
      await until("the helper's files to be gone", 5_000, async () => !existsSync(file('helper-a.txt')) && !existsSync(file('helper-b.txt')));
      if (readFileSync(file('root.txt'), 'utf8') !== 'from the root\n') throw new Error("the root's file changed");
    });

    await step('undo-the-rewind', 30_000, async () => {
      await rewind.locator('vscode-button.undo').click();
      await visible(rewind.locator('strong', { hasText: 'Undo rewind' }), 'the undo preview', 15_000);
      await visible(rewind.locator('li.file[data-path="helper-a.txt"]'), 'helper-a.txt in the undo preview', 5_000);
      await rewind.locator('vscode-button.apply').click();
      await visible(rewind.locator('.done', { hasText: '2 file(s) put back' }), 'the undo done', 15_000);
      await until("the helper's files to be back", 5_000, async () => existsSync(file('helper-a.txt')) && existsSync(file('helper-b.txt')));
    });

    await step('rewind-from-the-helpers-transcript-tab', 45_000, async () => {
      await contextMenu(row('helper'), 'Open Transcript');
      const task = tab.locator('article', { hasText: TASK }).first();
      await visible(task, "the helper's task in its transcript tab", 20_000);
      // This time from the message's context menu (VS Code's, through data-vscode-context).
      await contextMenu(task, 'Rewind…');
      const inTab = tab.locator('section.rewind');
      await visible(inTab, 'the rewind panel in the tab', 10_000);
      await inTab.locator('vscode-button', { hasText: 'Preview' }).click();
      await visible(inTab.locator('li.file[data-path="helper-b.txt"]'), 'helper-b.txt in the tab preview', 15_000);
      await inTab.locator('vscode-button.apply').click();
      await visible(inTab.locator('.done', { hasText: '2 file(s) rewound' }), 'the rewind done in the tab', 15_000);
      await until("the helper's files to be gone again", 5_000, async () => !existsSync(file('helper-a.txt')) && !existsSync(file('helper-b.txt')));
      if (readFileSync(file('root.txt'), 'utf8') !== 'from the root\n') throw new Error("the root's file changed");
    });
  },
};
