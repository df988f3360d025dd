import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { subagentWorld } from '../subagent/helpers';
import { checkpointsOf, startOf } from './fixture';

// Decision 0059 said "in read-only nothing is recorded (nothing can change)": a read-only session
// still runs a command outside the OS sandbox once the user approves it (`outsideSandbox`, or
// wherever no sandbox can start), and that command can change the workspace.
describe('checkpoints: an approved command outside the sandbox is recorded in a read-only session too', () => {
  const asked: string[] = [];
  const w = subagentWorld({
    sandbox: 'read-only',
    approval: 'ask',
    approvalPort: {
      ask: async (req) => {
        asked.push(req.tool);
        return 'allow';
      },
    },
  });
  const ws = () => fs.realpathSync(w.t.workspace);

  it('attack: a read-only session approves `outsideSandbox` and deletes a file; the rewind knows and restores it', async () => {
    fs.writeFileSync(path.join(ws(), 'keep.txt'), 'the user file\n');
    w.script.on(
      'root',
      {
        toolCalls: [
          { id: 'out1', name: 'run_command', arguments: { command: 'rm keep.txt && echo made > made.txt', outsideSandbox: true, justification: 'clean up' } },
        ],
      },
      { text: 'done' },
    );
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.deepEqual(asked, ['run_command'], 'the user approved the unconfined command');
    assert.equal(fs.existsSync(path.join(ws(), 'keep.txt')), false, 'the command did change the workspace');
    const [cp] = checkpointsOf(w.root.session.events);
    assert.ok(cp, 'its changes are recorded');
    assert.deepEqual(cp.changes.map((c) => [path.basename(c.path), c.tool, c.callId]).sort(), [
      ['keep.txt', 'run_command', 'out1'],
      ['made.txt', 'run_command', 'out1'],
    ]);
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    await w.t.h.checkpoints.apply(plan);
    assert.equal(fs.readFileSync(path.join(ws(), 'keep.txt'), 'utf8'), 'the user file\n');
    assert.equal(fs.existsSync(path.join(ws(), 'made.txt')), false);
  });
});
