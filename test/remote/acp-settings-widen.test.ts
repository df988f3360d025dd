// Attack (permissions never widen, decision 0122 for ACP agents): a parent delegates to the real
// ACP adapters of Claude Code and Codex. Arbor sets the agent's mode for the child's sandbox and
// refuses every permission request under `never`; but each adapter also reads its program's own
// settings — Claude Code's user and project settings files and the project's `.mcp.json`,
// Codex's `$CODEX_HOME/config.toml` — whose rules may allow what the parent's sandbox does not.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { privateTmpDir } from '../../src/core/remote/private-tmp';
import type { AcpAgentSettings } from '../../src/core/remote/settings';
import type { SandboxMode } from '../../src/core/session/events';
import type { OneShotResult } from '../../src/core/subagent/types';
import { type AcpAgentName, agentHome, agentLaunch, claudeBash, codexExec, SANDBOX_MODE_IDS, scriptAgents, turnRequests } from '../support/acp-agents';
import type { TestHarness } from '../support/harness';
import { listenerPerTest, ofType, remoteWorld } from './world';

describe('remote: an ACP agent’s own settings never widen its child (real claude-agent-acp, codex-acp)', function () {
  this.timeout(120_000);
  const w = remoteWorld();
  let home = '';
  afterEach(() => {
    if (home) fs.rmSync(home, { recursive: true, force: true });
    home = '';
  });

  /** The agent's settings in a fresh home; `plant` writes its own settings files there before it starts. */
  function settings(name: 'claude' | 'codex'): { agent: AcpAgentSettings; claudeDir: string; codexHome: string } {
    home = agentHome(`widen-${name}`);
    const launch = agentLaunch(name as AcpAgentName, w.server, home);
    const claudeDir = path.join(home, 'claude');
    fs.mkdirSync(claudeDir, { recursive: true });
    return {
      agent: { name, command: launch.command, args: launch.args, env: launch.env, modes: SANDBOX_MODE_IDS[name], graceMs: 1500 },
      claudeDir,
      codexHome: path.join(home, 'codex'),
    };
  }

  /** One child of the agent in `sandbox` (approval `never`), run to its end; `plant` sees the harness's workspace first. */
  async function child(
    name: 'claude' | 'codex',
    sandbox: SandboxMode,
    plant: (dirs: { claudeDir: string; codexHome: string; workspace: string }) => void,
    completes = true,
  ): Promise<{ t: TestHarness; id: string; r: OneShotResult; results: ReturnType<typeof ofType<'tool/result'>> }> {
    const s = settings(name);
    const t = await w.reopen({ remote: { acp: [s.agent] }, sandbox });
    plant({ claudeDir: s.claudeDir, codexHome: s.codexHome, workspace: fs.realpathSync(t.workspace) });
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, `acp:${name}`, { prompt: 'Do the task' });
    const r = await run.result;
    await run.dispose();
    if (completes) assert.equal(r.stopReason, 'completed', r.error);
    return { t, id: run.id, r, results: ofType((await t.h.store.inspect(run.id)).events, 'tool/result') };
  }

  const allowBash = JSON.stringify({ permissions: { allow: ['Bash'] } });

  describe('claude-agent-acp', () => {
    const PLANTS: readonly { how: string; plant: (d: { claudeDir: string; workspace: string }) => void }[] = [
      { how: 'the user settings allow Bash', plant: (d) => fs.writeFileSync(path.join(d.claudeDir, 'settings.json'), allowBash) },
      {
        how: 'the user settings default to bypassPermissions',
        plant: (d) => fs.writeFileSync(path.join(d.claudeDir, 'settings.json'), JSON.stringify({ permissions: { defaultMode: 'bypassPermissions' } })),
      },
      {
        how: "a trusted project's .claude/settings.local.json allows Bash",
        plant: (d) => {
          fs.mkdirSync(path.join(d.workspace, '.claude'), { recursive: true });
          fs.writeFileSync(path.join(d.workspace, '.claude', 'settings.local.json'), allowBash);
          fs.writeFileSync(path.join(d.claudeDir, '.claude.json'), JSON.stringify({ projects: { [d.workspace]: { hasTrustDialogAccepted: true } } }));
        },
      },
    ];
    for (const p of PLANTS)
      it(`attack: ${p.how}; the read-only child still writes nothing`, async () => {
        scriptAgents(w.server, { messages: [claudeBash('echo x > made-by-claude.txt'), { text: 'tried' }] });
        const { t, results } = await child('claude', 'read-only', p.plant);
        assert.equal(fs.existsSync(path.join(t.workspace, 'made-by-claude.txt')), false, `the read-only ACP claude child wrote a file: ${results[0]?.content}`);
        assert.equal(results[0]?.isError, true);
      });

    it('attack: the user settings allow Bash; the workspace-write child cannot write outside the workspace, yet still lists it', async () => {
      const outside = path.join(w.homes.claude, 'outside-acp.txt');
      scriptAgents(w.server, {
        messages: [{ toolCalls: [...claudeBash(`echo x > ${outside}`).toolCalls!, ...claudeBash('ls').toolCalls!] }, { text: 'tried' }],
      });
      const { results } = await child('claude', 'workspace-write', (d) => {
        fs.writeFileSync(path.join(d.claudeDir, 'settings.json'), allowBash);
        fs.writeFileSync(path.join(d.workspace, 'visible.txt'), 'x');
      });
      assert.equal(fs.existsSync(outside), false, `the workspace-write ACP claude child wrote outside the workspace: ${results[0]?.content}`);
      assert.deepEqual(
        results.map((x) => x.isError),
        [true, false],
      );
      assert.match(results[1].content, /visible\.txt/, 'a read-only command still runs');
    });

    it("attack: the repository's own .mcp.json names a server Arbor never allowed; the confined child does not start it", async () => {
      const marker = path.join(w.homes.claude, 'acp-mcp-ran');
      scriptAgents(w.server, { messages: [{ text: 'hello' }] });
      await child('claude', 'workspace-write', (d) =>
        fs.writeFileSync(path.join(d.workspace, '.mcp.json'), JSON.stringify({ mcpServers: { x: { command: 'sh', args: ['-c', `echo ran >> ${marker}`] } } })),
      );
      assert.equal(fs.existsSync(marker), false, 'the ACP claude child started a server of .mcp.json that the parent may not use, on the host');
    });
    it('a read-only child: the user’s and the repository’s CLAUDE.md and AGENTS.md reach the model (Arbor appends them), while the settings still do not widen it', async () => {
      scriptAgents(w.server, { messages: [claudeBash('echo x > made-by-claude.txt'), { text: 'tried' }] });
      const first = w.server.requests.length;
      const { t, results } = await child('claude', 'read-only', (d) => {
        fs.writeFileSync(path.join(d.claudeDir, 'settings.json'), allowBash);
        fs.writeFileSync(path.join(d.claudeDir, 'CLAUDE.md'), 'ACP-USER-CLAUDE-MARK\n');
        fs.writeFileSync(path.join(d.workspace, 'CLAUDE.md'), 'ACP-REPO-CLAUDE-MARK\n');
        fs.writeFileSync(path.join(d.workspace, 'AGENTS.md'), 'ACP-REPO-AGENTS-MARK\n');
      });
      const turn = turnRequests(w.server, 'messages').find(
        (q) => w.server.requests.indexOf(q) >= first && JSON.stringify(q.body.messages).includes('Do the task'),
      );
      assert.ok(turn, 'the child asked the model');
      const system = JSON.stringify(turn.body.system);
      for (const mark of ['ACP-USER-CLAUDE-MARK', 'ACP-REPO-AGENTS-MARK', 'ACP-REPO-CLAUDE-MARK'])
        assert.ok(system.includes(mark), `${mark} is not in the system prompt`);
      assert.equal(
        fs.existsSync(path.join(t.workspace, 'made-by-claude.txt')),
        false,
        `the settings widened the read-only ACP claude child: ${results[0]?.content}`,
      );
      assert.equal(results[0]?.isError, true);
    });
  });

  describe('codex-acp', () => {
    const listener = listenerPerTest();

    const appendConfig = (codexHome: string, toml: string) => fs.appendFileSync(path.join(codexHome, 'config.toml'), toml);

    it("attack: config.toml's network_access = true; the workspace-write child's command still cannot connect", async () => {
      scriptAgents(w.server, {
        responses: [codexExec(`bash -c 'sleep 0.3; exec 3<>/dev/tcp/127.0.0.1/${listener.port} && echo reached-the-network'`), { text: 'tried' }],
      });
      const { results } = await child('codex', 'workspace-write', (d) => appendConfig(d.codexHome, '[sandbox_workspace_write]\nnetwork_access = true\n'));
      assert.match(results[0]?.content ?? '', /Operation not permitted/, 'the codex child ran its command, in its sandbox');
      assert.doesNotMatch(results[0].content, /reached-the-network/, `the ACP codex child's command reached the network: ${results[0].content}`);
      assert.equal(listener.reached, 0, 'nothing connected to the listener');
    });

    it("attack: the repository's own .codex/config.toml names an MCP server (codex-acp trusts every session folder); the confined child is refused, nothing started", async () => {
      const marker = path.join(w.homes.codex, 'acp-codex-mcp-ran');
      scriptAgents(w.server, { responses: [{ text: 'hello' }] });
      let config = '';
      const { r } = await child(
        'codex',
        'workspace-write',
        (d) => {
          fs.mkdirSync(path.join(d.workspace, '.codex'));
          config = path.join(d.workspace, '.codex', 'config.toml');
          fs.writeFileSync(config, `[mcp_servers.x]\ncommand = "sh"\nargs = ["-c", ${JSON.stringify(`echo ran >> ${marker}; sleep 2`)}]\n`);
        },
        false,
      );
      assert.equal(fs.existsSync(marker), false, "the ACP codex child started a server of the repository's .codex/config.toml, on the host");
      assert.equal(r.stopReason, 'error');
      assert.match(r.error ?? '', /^ACP_PROJECT_CONFIG: .*codex-acp.*\.codex\/config\.toml/);
      assert.ok(r.error?.includes(config), r.error);
      assert.equal(turnRequests(w.server, 'responses').length, 0, 'no turn was run');
    });

    it("attack: config.toml's writable_roots names a folder outside; the workspace-write child still cannot write there", async () => {
      let outside = '';
      const { results } = await child('codex', 'workspace-write', (d) => {
        // In the agent's home: outside the child's workspace and outside the temp folders Codex's workspace-write also writes.
        outside = path.join(path.dirname(d.codexHome), 'outside');
        fs.mkdirSync(outside);
        scriptAgents(w.server, { responses: [codexExec(`echo x > ${outside}/o.txt; echo ran`), { text: 'tried' }] });
        appendConfig(d.codexHome, `[sandbox_workspace_write]\nwritable_roots = [${JSON.stringify(outside)}]\n`);
      });
      assert.match(results[0]?.content ?? '', /\bran\b/, 'the codex child ran its command');
      assert.equal(fs.existsSync(path.join(outside, 'o.txt')), false, `the ACP codex child wrote outside the workspace: ${results[0].content}`);
    });

    // Decision 0122, amended s60: a confined local agent's temp folder is its own. codex-acp 2.6.0 sends
    // `excludeSlashTmp: false` with every workspace-write turn, over CODEX_CONFIG's key (checked: the
    // host's /tmp stays writable through it; the decision says so), so only TMPDIR is asserted here.
    it("a workspace-write child's $TMPDIR is a 0700 folder of its own in the store, gone once the child ended", async () => {
      const cmd = `sleep 0.3; touch "$TMPDIR/x" && echo "tmpdir=$TMPDIR" && ls -a "$TMPDIR" && stat -c "mode=%a" "$TMPDIR"`;
      scriptAgents(w.server, { responses: [codexExec(cmd), { text: 'tried' }] });
      const { t, id, results } = await child('codex', 'workspace-write', () => undefined);
      const out = results[0]?.content ?? '';
      const own = privateTmpDir(t.h.store.dir, id);
      assert.ok(out.includes(`tmpdir=${own}\n`) && /\nx\n/.test(out), `$TMPDIR is the child's own folder, and x was made in it: ${out}`);
      assert.match(out, /mode=700/, out);
      assert.equal(fs.existsSync(own), false, 'the private folder is removed once the child ended');
    });
  });
});
