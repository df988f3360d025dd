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

// `arbor run --sandbox read-only --approval auto`: auto-approval answers the questions the
// approval port is asked, but a command outside the OS sandbox is past the explicit ceiling, so
// it is refused before any port is asked (decision 0125, amended). Real processes, real
// bubblewrap, the real model server; the control runs the same call under full-access.
describe('cli: --approval auto does not lift an explicit --sandbox ceiling', () => {
  const w = cliWorld('arbor-cli-ceiling-auto-', { realDir: true });
  const outside = () => path.join(w.dir, 'outside.txt');
  const unconfined = () => ({
    name: 'run_command',
    arguments: { command: `echo escaped > ${outside()}`, outsideSandbox: true, justification: 'to write outside' },
  });

  async function results(flags: string[]): Promise<Array<{ content?: string; isError?: boolean }>> {
    w.server.enqueue({ toolCalls: [unconfined()] }, { text: 'tried' });
    const r = await arbor(['run', ...w.common, ...flags, '--approval', 'auto', '--json', 'escape']);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; content?: string; isError?: boolean })
      .filter((e) => e.type === 'tool/result');
  }

  for (const mode of ['read-only', 'workspace-write']) {
    it(`--sandbox ${mode}: an outsideSandbox command is refused without asking, and says how to allow it`, async () => {
      const [res] = await results(['--sandbox', mode]);
      assert.ok(res.isError, res.content);
      assert.match(res.content!, /POLICY_CEILING/);
      assert.match(res.content!, new RegExp(`--sandbox ${mode}`));
      assert.match(res.content!, /rerun with --sandbox full-access/);
      assert.equal(fs.existsSync(outside()), false, 'the command did not run unconfined');
    });
  }

  for (const approval of ['auto', 'never']) {
    it(`--sandbox workspace-write: a protected-path write stays an approval question (--approval ${approval})`, async () => {
      w.server.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: '.vscode/settings.json', content: '{}' } }] }, { text: 'wrote' });
      const r = await arbor(['run', ...w.common, '--sandbox', 'workspace-write', '--approval', approval, '--json', 'settings']);
      assert.equal(r.code, 0, r.stderr);
      const res = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; content?: string; isError?: boolean })
        .find((e) => e.type === 'tool/result')!;
      const file = path.join(w.ws, '.vscode', 'settings.json');
      if (approval === 'auto') {
        assert.ok(!res.isError, res.content);
        assert.equal(fs.readFileSync(file, 'utf8'), '{}');
      } else {
        assert.ok(res.isError, res.content);
        assert.doesNotMatch(res.content!, /POLICY_CEILING/);
        assert.equal(fs.existsSync(file), false);
      }
    });
  }

  it('control: --sandbox full-access --approval auto runs it', async () => {
    const [res] = await results(['--sandbox', 'full-access']);
    assert.ok(!res.isError, res.content);
    assert.equal(fs.readFileSync(outside(), 'utf8').trim(), 'escaped');
  });

  it('without --sandbox (no ceiling) --approval auto still approves it, as before', async () => {
    const [res] = await results([]);
    assert.ok(!res.isError, res.content);
    assert.equal(fs.existsSync(outside()), true);
  });
});
