// Hooks (issue 23.4, decision 0057), in real VS Code with the sample workspace's hook
// (.arbor/settings.json: a PreToolUse hook on Bash that blocks `rm -rf`):
//   01 open the panel and type "clean the build": the scripted model asks to run `rm -rf build`
//   02 the chat shows the hook's line "hook PreToolUse blocked run_command: 'rm -rf' is blocked …",
//      the model's next request carries the reason, and the build folder is still there
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const flow = {
  name: 'hooks',
  async run({ chat, send, openPanel, folder, model, step, until, visible }) {
    mkdirSync(join(folder, 'build'), { recursive: true });
    await step('open-panel-and-ask', 60_000, async () => {
      await openPanel();
      await send('clean the build');
    });

    await step('hook-line-in-the-transcript', 40_000, async () => {
      const line = chat.locator('.hook.blocked', { hasText: 'hook PreToolUse blocked run_command' }).first();
      await visible(line, 'the hook line in the chat', 30_000);
      await visible(chat.getByText("The workspace's hook refused", { exact: false }).first(), "the model's answer after the block", 20_000);
      await until('the model to have read the reason', 5_000, async () =>
        model.requests.some((r) => r.body.messages.some((m) => m.role === 'tool' && String(m.content).includes("'rm -rf' is blocked in this workspace"))),
      );
      if (!existsSync(join(folder, 'build'))) throw new Error('the build folder was deleted: the hook did not block');
    });
  },
};
