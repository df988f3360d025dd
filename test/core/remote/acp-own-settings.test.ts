import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { confinedCodexConfig, sessionMeta } from '../../../src/core/remote/acp-open';
import { codexProjectConfig, projectConfigRefusal } from '../../../src/core/remote/acp-project-config';
import { readAcpAgents } from '../../../src/core/remote/acp-settings';

// What Arbor tells an ACP agent so its program's own settings never widen a child (decision 0122,
// amended in s58); the real programs are attacked in test/remote/acp-settings-widen.test.ts.

describe('remote: an ACP agent’s own settings (decision 0122, s58)', () => {
  it('a confined session asks Claude Code for no settings file; a full-access one leaves them', () => {
    for (const mode of ['read-only', 'workspace-write'] as const)
      assert.deepEqual(sessionMeta(mode), { _meta: { claudeCode: { options: { settingSources: [] } } } });
    assert.deepEqual(sessionMeta('full-access'), {});
  });

  it("a confined session's instructions are appended to Claude Code's own system prompt; none: no systemPrompt; full-access: nothing", () => {
    for (const mode of ['read-only', 'workspace-write'] as const)
      assert.deepEqual(sessionMeta(mode, '# Project instructions\n\nx'), {
        _meta: {
          claudeCode: { options: { settingSources: [], systemPrompt: { type: 'preset', preset: 'claude_code', append: '# Project instructions\n\nx' } } },
        },
      });
    assert.deepEqual(sessionMeta('read-only', ''), { _meta: { claudeCode: { options: { settingSources: [] } } } });
    assert.deepEqual(sessionMeta('full-access', 'x'), {});
  });

  it("CODEX_CONFIG: no writable root, the deployment's other keys kept; one that is no JSON object is replaced", () => {
    assert.deepEqual(JSON.parse(confinedCodexConfig(undefined)), { sandbox_workspace_write: { writable_roots: [] } });
    const own = JSON.stringify({ model: 'm', sandbox_workspace_write: { writable_roots: ['/etc'], exclude_slash_tmp: true } });
    assert.deepEqual(JSON.parse(confinedCodexConfig(own)), { model: 'm', sandbox_workspace_write: { writable_roots: [], exclude_slash_tmp: true } });
    assert.deepEqual(JSON.parse(confinedCodexConfig(JSON.stringify({ sandbox_workspace_write: 'x' }))), { sandbox_workspace_write: { writable_roots: [] } });
    for (const bad of ['not json', '[1]', 'null'])
      assert.deepEqual(JSON.parse(confinedCodexConfig(bad)), { sandbox_workspace_write: { writable_roots: [] } }, bad);
  });

  it('a configured env.CODEX_CONFIG that is no JSON object is refused with what to do', () => {
    const read = readAcpAgents([{ name: 'codex', command: 'codex-acp', env: { CODEX_CONFIG: '{oops' } }], 'arbor.remote.acp');
    assert.deepEqual(read.agents, []);
    assert.match(read.problems[0], /^arbor\.remote\.acp\[0\]: "env\.CODEX_CONFIG" must be a JSON object/);
    assert.equal(readAcpAgents([{ name: 'codex', command: 'codex-acp', env: { CODEX_CONFIG: '{"model":"m"}' } }], 'x').agents.length, 1);
  });

  describe('the repository’s .codex/config.toml (codex-acp trusts every session folder)', () => {
    let root = '';
    beforeEach(() => (root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'acp-own-')))));
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));
    const plant = (dir: string) => {
      fs.mkdirSync(path.join(dir, '.codex'), { recursive: true });
      fs.writeFileSync(path.join(dir, '.codex', 'config.toml'), '[mcp_servers.x]\ncommand = "sh"\n');
      return path.join(dir, '.codex', 'config.toml');
    };

    it('found in the folder or above it up to the repository root (.git), not beyond', () => {
      const repo = path.join(root, 'repo');
      const sub = path.join(repo, 'a', 'b');
      fs.mkdirSync(sub, { recursive: true });
      assert.equal(codexProjectConfig(sub), undefined);
      plant(root); // above the repository: Codex does not read it
      fs.mkdirSync(path.join(repo, '.git'));
      assert.equal(codexProjectConfig(sub), undefined);
      const atRoot = plant(repo);
      assert.equal(codexProjectConfig(sub), atRoot);
      const near = plant(path.join(repo, 'a'));
      assert.equal(codexProjectConfig(sub), near, 'the nearest first');
      assert.equal(codexProjectConfig(path.join(repo, 'a')), near);
    });

    it('refuses a confined codex-acp child there (ACP_PROJECT_CONFIG, with the file and what to do); full access and other agents start', () => {
      const found = plant(root);
      const why = projectConfigRefusal('@agentclientprotocol/codex-acp', 'The ACP agent "codex"', 'read-only', root);
      assert.match(why ?? '', /^ACP_PROJECT_CONFIG: The ACP agent "codex" \(@agentclientprotocol\/codex-acp\) trusts/);
      assert.ok(why?.includes(found) && /Remove or rename that file/.test(why), why);
      assert.ok(projectConfigRefusal('codex-acp', 'x', 'workspace-write', root));
      assert.equal(projectConfigRefusal('@agentclientprotocol/codex-acp', 'x', 'full-access', root), undefined);
      assert.equal(projectConfigRefusal('@agentclientprotocol/claude-agent-acp', 'x', 'read-only', root), undefined);
      assert.equal(projectConfigRefusal(undefined, 'x', 'read-only', root), undefined);
      fs.rmSync(found);
      assert.equal(projectConfigRefusal('@agentclientprotocol/codex-acp', 'x', 'read-only', root), undefined);
    });
  });
});
