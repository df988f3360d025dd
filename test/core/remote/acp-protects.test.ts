// An ACP agent's own project configuration, named by the user (`protects`, decision 0115): while
// the harness that configured the agent runs, a confined command (real bubblewrap) cannot plant it
// and write_file needs approval; once that harness closes, the name is no longer protected.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { protectedNameReason, standInNames } from '../../../src/core/tools/protected-names';
import { makeHarness } from '../../support/harness';
import { ModelServer } from '../../support/model-server';

describe('remote: an ACP agent’s "protects" names (real bubblewrap)', function () {
  this.timeout(60_000);
  let server: ModelServer;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());

  it('attack: a command plants .kiro/hooks.json at the top and below; refused, and write_file is refused under approval never', async () => {
    const t = await makeHarness(server, { remote: { acp: [{ name: 'kiro', command: 'true', protects: ['.kiro'] }] } });
    try {
      fs.mkdirSync(path.join(t.workspace, 'pkg/.kiro'), { recursive: true });
      fs.writeFileSync(path.join(t.workspace, 'pkg/.kiro/hooks.json'), '{}');
      const plant = 'mkdir -p .kiro; echo evil > .kiro/hooks.json; echo evil > pkg/.kiro/hooks.json; mv pkg/.kiro pkg/k; echo done';
      server.enqueue(
        { toolCalls: [{ name: 'run_command', arguments: { command: plant } }] },
        { toolCalls: [{ name: 'write_file', arguments: { path: 'pkg/.kiro/hooks.json', content: 'evil' } }] },
        { text: 'done' },
      );
      const root = await t.h.createSession();
      await root.accept('go');
      await t.h.settle();
      const results = root.session.events.filter((e) => e.type === 'tool/result');
      assert.equal(results.length, 2);
      const [cmd, write] = results as { content: string; isError: boolean; code?: string }[];
      assert.match(cmd.content, /done/, cmd.content);
      assert.match(cmd.content, /Read-only file system|Device or resource busy/, cmd.content);
      assert.equal(write.isError, true, write.content);
      assert.match(write.content, /kiro.*own project configuration/, write.content);
      assert.equal(fs.existsSync(path.join(t.workspace, '.kiro')), false, 'no .kiro was made at the top');
      assert.equal(fs.readFileSync(path.join(t.workspace, 'pkg/.kiro/hooks.json'), 'utf8'), '{}');
      assert.ok(protectedNameReason('.kiro'));
    } finally {
      await t.cleanup();
    }
    assert.equal(protectedNameReason('.kiro'), undefined, 'the name went with the harness that configured it');
  });

  it('an OpenCode agent brings its own names (by its program): a command cannot plant opencode.json at the top while it is configured', async () => {
    assert.equal(standInNames().includes('opencode.json'), false, 'no OpenCode configured: no visible stand-in');
    const t = await makeHarness(server, { remote: { acp: [{ name: 'oc', command: '/opt/bin/opencode', args: ['acp'] }] } });
    try {
      assert.ok(standInNames().includes('opencode.json'));
      server.enqueue(
        { toolCalls: [{ name: 'run_command', arguments: { command: 'echo "{}" > opencode.json; echo "{}" > opencode.jsonc; echo done' } }] },
        { text: 'done' },
      );
      const root = await t.h.createSession();
      await root.accept('go');
      await t.h.settle();
      const [cmd] = root.session.events.filter((e) => e.type === 'tool/result') as { content: string }[];
      assert.match(cmd.content, /done/, cmd.content);
      for (const f of ['opencode.json', 'opencode.jsonc']) assert.equal(fs.existsSync(path.join(t.workspace, f)), false, `${f} was planted at the top`);
    } finally {
      await t.cleanup();
    }
    assert.equal(standInNames().includes('opencode.json'), false, 'the names went with the harness');
  });
});
