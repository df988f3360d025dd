import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../../src/core/harness';
import { arbor, cliWorld } from '../support/cli';

// `arbor send --sandbox read-only` to a session switched to full-access elsewhere on this store
// (`arbor acp`'s session/set_mode, the panel): the explicit flag is the widest the process runs
// anything under (decision 0125). Real processes, the real OS sandbox, the real model server.
describe('cli: an explicit --sandbox is a ceiling over a session’s own switch', () => {
  const w = cliWorld('arbor-cli-ceiling-', { realDir: true });

  /** A session made by `arbor run`, then switched to full-access as `arbor acp` or the panel would. */
  async function switchedSession(): Promise<string> {
    w.server.enqueue({ text: 'hello' });
    const r = await arbor(['run', ...w.common, 'hello']);
    assert.equal(r.code, 0, r.stderr);
    const id = /session (\S+)/.exec(r.stderr)![1];
    const h = await Harness.open({
      storeDir: w.store,
      workspace: [w.ws],
      model: { baseURL: w.server.baseURL, name: 'test-model', apiKey: 'test', maxRetries: 0, timeoutMs: 10_000 },
      sandbox: 'workspace-write',
      approval: 'never',
    });
    try {
      await h.setPolicy(id, { sandbox: 'full-access' });
    } finally {
      await h.close();
    }
    return id;
  }

  const outside = () => path.join(w.dir, 'outside.txt');
  const tries = () => [
    { name: 'write_file', arguments: { path: 'in.txt', content: 'x' } },
    { name: 'run_command', arguments: { command: `echo escaped > ${outside()}` } },
  ];

  it('send --sandbox read-only: neither the file tool nor a command writes, though the session says full-access', async () => {
    const id = await switchedSession();
    w.server.enqueue({ toolCalls: tries() }, { text: 'tried' });
    const r = await arbor(['send', ...w.common, '--sandbox', 'read-only', '--json', id, 'write']);
    assert.equal(r.code, 0, r.stderr);
    const results = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; content?: string; isError?: boolean })
      .filter((e) => e.type === 'tool/result');
    assert.equal(results.length, 2);
    assert.ok(results[0].isError, results[0].content);
    assert.match(results[0].content!, /read-only/);
    assert.equal(fs.existsSync(path.join(w.ws, 'in.txt')), false);
    assert.equal(fs.existsSync(outside()), false, 'the command ran confined, not unconfined');
  });

  it('without the flag the session’s own switch holds (its mode is where it was left)', async () => {
    const id = await switchedSession();
    w.server.enqueue({ toolCalls: tries() }, { text: 'wrote' });
    const r = await arbor(['send', ...w.common, id, 'write']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.existsSync(outside()), true, 'full-access: unconfined, as the session was switched');
  });
});
