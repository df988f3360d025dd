import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { arbor, cliWorld } from '../support/cli';
import { repoRoot } from '../support/repo-root';

describe('cli: hooks from the workspace run in `arbor run` (the folder counts as trusted)', () => {
  const w = cliWorld('arbor-cli-hooks-');

  it("the demo workspace's PreToolUse hook blocks rm -rf; the reason reaches the model and the run is in the log", async () => {
    fs.cpSync(path.join(repoRoot(), 'media', 'sample-workspace', '.arbor'), path.join(w.ws, '.arbor'), { recursive: true });
    fs.mkdirSync(path.join(w.ws, 'build'));
    w.server.enqueue({ toolCalls: [{ id: 'c1', name: 'run_command', arguments: { command: 'rm -rf build' } }] }, { text: 'I will not delete it.' });
    // The user's own file is one that does not exist: only the workspace's hook runs.
    const r = await arbor(['run', ...w.common, '--json', 'clean the build'], { ARBOR_USER_SETTINGS: path.join(w.dir, 'none.json') });
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const run = events.find((e) => e.type === 'hook/run');
    assert.equal(run?.outcome, 'blocked');
    assert.equal(run?.event, 'PreToolUse');
    assert.match(String(run?.reason), /'rm -rf' is blocked in this workspace/);
    const result = events.find((e) => e.type === 'tool/result');
    assert.match(String(result?.content), /A PreToolUse hook blocked run_command: 'rm -rf' is blocked/);
    assert.ok(fs.existsSync(path.join(w.ws, 'build')), 'the folder is still there');
    assert.match(JSON.stringify(w.server.requests[1].body.messages), /'rm -rf' is blocked in this workspace/);
  });
});
