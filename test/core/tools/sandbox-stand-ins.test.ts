// Stand-ins across Arbor processes (decision 0103, amended in session 48). A stand-in is an empty
// folder on the host (`.vscode` where the workspace has none) with a read-only mount on it in the
// command's namespaces; deleting the folder on the host dissolves that mount in every namespace.
// Two Arbor processes on one workspace (the extension and a CLI): the first removed its stand-in
// when its command ended, while a command of the second stood on the same folder, which could
// then make `.vscode/tasks.json` itself. Real bubblewrap, a real second Node process.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRunCommandTool } from '../../../src/core/tools/run-command';
import { CommandSandbox } from '../../../src/core/tools/sandbox/command-sandbox';
import { ResidentPool } from '../../../src/core/tools/sandbox/residents';
import { zygotePath } from '../../../src/core/tools/sandbox/zygote-path';
import { call, makeWorkspace, otherProcess, skipWithoutSandbox, type Workspace, waitUntil } from './fixture';

describe('stand-ins shared with another Arbor process (decision 0103, amended)', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let pool: ResidentPool | undefined;

  before(async function () {
    await skipWithoutSandbox(this);
  });
  beforeEach(() => {
    ws = makeWorkspace();
    execFileSync('git', ['init', '-q', ws.root]);
  });
  afterEach(() => {
    pool?.closeAll();
    pool = undefined;
    ws.cleanup();
  });

  for (const residents of [true, false]) {
    it(`a missing .vscode: the other process's command ending does not remove the folder a command here (${residents ? 'in a resident' : 'in a bubblewrap of its own'}) stands on, and nothing can be made there`, async function () {
      const zygote = zygotePath();
      if (residents && !zygote) this.skip();
      pool = residents && zygote ? new ResidentPool({ zygote }) : undefined;
      const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents: pool ?? false }) });
      // The other process's command stands on its stand-in for a second: the empty .vscode is on the host.
      const other = otherProcess(ws.root, 'sleep 1');
      const otherDone = new Promise<void>((resolve) => other.on('exit', () => resolve()));
      try {
        assert.ok(await waitUntil(() => fs.existsSync(ws.at('.vscode')), 20_000), "the other process's stand-in appears");
        // This command waits (up to 6 s) for the folder to go, then makes it with a task that runs on folder open.
        const r = await call(
          tool,
          {
            command:
              'i=0; while [ -d .vscode ] && [ $i -lt 120 ]; do sleep 0.05; i=$((i+1)); done; ' +
              'mkdir -p .vscode 2>/dev/null; echo \'{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}\' > .vscode/tasks.json 2>/dev/null && echo PLANTED; echo done',
            timeoutMs: 20_000,
          },
          ws.ctx(),
        );
        assert.match(r.content, /done/, r.content);
        assert.doesNotMatch(r.content, /PLANTED/, r.content);
        assert.equal(fs.existsSync(ws.at('.vscode/tasks.json')), false, 'a command made .vscode/tasks.json on the host');
      } finally {
        await otherDone;
      }
      // Once neither stands on it, it is gone from the host, as before.
      assert.equal(fs.existsSync(ws.at('.vscode')), false, 'the stand-in is left on the host');
    });
  }
});
