import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { blobId } from '../../../src/core/checkpoint/objects';
import { swapPaths } from '../../support/swapper';
import { subagentWorld } from '../subagent/helpers';
import { checkpointsOf, write } from './fixture';

// The checkpoint of a file tool's call reads the file before the call (and after an edit) from
// the host, where no sandbox applies. A command swapping the file's folder for a link to a folder
// outside the workspace made that read follow the link: a file outside — one the sandbox hides
// from the command, under /run/user — was stored as the workspace file's "before" in the shadow
// repository, which the command itself can read from the store, and which a rewind writes back
// into the workspace (session 50). The read goes through the folder pinned from its root now.

const secret = 'SECRET outside\n';

describe('checkpoints against a folder swapped for a link while a file tool is recorded (decisions 0059, 0097)', function () {
  this.timeout(120_000);
  const w = subagentWorld({}, { perTest: true });

  it('no change ever records the content of a file outside the workspace', async () => {
    await w.setup();
    const ws = fs.realpathSync(w.t.workspace);
    const outside = fs.mkdtempSync(`${ws}-outside-`);
    try {
      fs.mkdirSync(path.join(ws, 'sub'));
      fs.writeFileSync(path.join(ws, 'sub', 'f.txt'), 'inside\n');
      fs.writeFileSync(path.join(outside, 'f.txt'), secret);
      fs.symlinkSync(outside, path.join(ws, 'alt'));
      const calls = Array.from({ length: 40 }, (_, i) => write('sub/f.txt', `written ${i}\n`));
      w.script.on('root', { toolCalls: calls }, { toolCalls: calls }, { toolCalls: calls }, { text: 'done' });
      const s = swapPaths(path.join(ws, 'sub'), path.join(ws, 'alt'), 60_000);
      // The swapper runs before the turn starts (python may start late on a busy machine).
      for (let i = 0; i < 500 && !fs.lstatSync(path.join(ws, 'sub')).isSymbolicLink(); i++) await new Promise((r) => setTimeout(r, 10));
      await w.root.accept('[[root]] go');
      await w.t.h.settle();
      s.stop();
      await s.swaps;
      const changes = checkpointsOf(w.root.session.events).flatMap((c) => c.changes);
      const leaked = blobId(Buffer.from(secret, 'utf8'));
      assert.ok(changes.length > 0, 'some writes were recorded');
      assert.deepEqual(
        changes.filter((c) => c.before === leaked || c.after === leaked).map((c) => c.path),
        [],
        `no change holds the file outside (${changes.length} changes)`,
      );
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});
