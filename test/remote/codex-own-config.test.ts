// Attack (permissions never widen: the network): a parent without the network (Arbor's default,
// `--network` / `arbor.policy.network` off) delegates to Codex in workspace-write. Codex's own
// configuration — the user's `$CODEX_HOME/config.toml`, or a trusted project's `.codex/config.toml`
// — may say `[sandbox_workspace_write] network_access = true`; Arbor passed only `-s workspace-write`,
// so the Codex child's commands reached the network its parent's commands cannot.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { privateTmpDir } from '../../src/core/remote/private-tmp';
import type { TestHarness } from '../support/harness';
import { byWire, listenerPerTest, mockCodexOverrides, ofType, remoteSettings, remoteWorld } from './world';

describe('remote: a Codex child never gets the network its parent has not (real Codex)', function () {
  this.timeout(120_000);
  const w = remoteWorld();
  const listener = listenerPerTest();

  const connect = () => `sleep 0.3; exec 3<>/dev/tcp/127.0.0.1/${listener.port} && echo reached-the-network`;

  const OPENERS: readonly { how: string; open: () => Promise<TestHarness> }[] = [
    {
      how: "Codex's own config.toml",
      open: async () => {
        fs.writeFileSync(path.join(w.homes.codex, 'config.toml'), '[sandbox_workspace_write]\nnetwork_access = true\n');
        return w.t;
      },
    },
    {
      how: 'an arbor.remote.codex.overrides entry',
      open: () =>
        w.reopen({
          remote: remoteSettings(w.server, w.homes, { codex: { overrides: [...mockCodexOverrides(w.server), 'sandbox_workspace_write.network_access=true'] } }),
        }),
    },
  ];

  for (const o of OPENERS)
    it(`attack: ${o.how} opens workspace-write's network; the child's command still cannot connect`, async () => {
      const t = await o.open();
      byWire(w.server, {
        chat: [
          { toolCalls: [{ name: 'run_command', arguments: { command: `bash -c '${connect()}'` } }] },
          { toolCalls: [{ name: 'delegate_codex', arguments: { prompt: 'connect' } }] },
          { text: 'parent done' },
        ],
        responses: [{ toolCalls: [{ name: 'exec_command', arguments: { cmd: `bash -c '${connect()}'` } }] }, { text: 'tried' }],
      });
      const root = await t.h.createSession();
      await root.accept('go');
      await t.h.settle();
      const mine = ofType((await t.h.store.inspect(root.id)).events, 'tool/result').find((r) => r.name === 'run_command');
      assert.ok(mine?.isError, `the parent's own command has no network: ${mine?.content}`);
      const [child] = t.h.store.children(root.id);
      const res = ofType((await t.h.store.inspect(child.id)).events, 'tool/result').find((r) => r.name === 'codex:shell');
      assert.ok(res, 'the codex child ran its command');
      assert.doesNotMatch(res.content, /reached-the-network/, `the codex child's command reached the network: ${res.content}`);
      assert.equal(listener.reached, 0, 'nothing connected to the listener');
    });

  it("with the network allowed to the parent, Codex's own config.toml decides: its network_access = true connects", async () => {
    fs.writeFileSync(path.join(w.homes.codex, 'config.toml'), '[sandbox_workspace_write]\nnetwork_access = true\n');
    const t = await w.reopen({ commands: { network: true } });
    byWire(w.server, {
      chat: [{ toolCalls: [{ name: 'delegate_codex', arguments: { prompt: 'connect' } }] }, { text: 'parent done' }],
      responses: [{ toolCalls: [{ name: 'exec_command', arguments: { cmd: `bash -c '${connect()}'` } }] }, { text: 'tried' }],
    });
    const root = await t.h.createSession();
    await root.accept('go');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    const res = ofType((await t.h.store.inspect(child.id)).events, 'tool/result').find((r) => r.name === 'codex:shell');
    assert.match(res?.content ?? '', /reached-the-network/, `the codex child's command: ${res?.content}`);
    assert.equal(listener.reached, 1);
  });
});

describe('remote: a Codex child never gets a root its parent has not (real Codex)', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  it("attack: Codex's own config.toml adds a writable root outside the workspace; the child cannot write there", async () => {
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(w.homes.codex, 'outside-')));
    fs.writeFileSync(path.join(w.homes.codex, 'config.toml'), `[sandbox_workspace_write]\nwritable_roots = [${JSON.stringify(outside)}]\n`);
    byWire(w.server, {
      chat: [{ toolCalls: [{ name: 'delegate_codex', arguments: { prompt: 'write outside' } }] }, { text: 'parent done' }],
      responses: [{ toolCalls: [{ name: 'exec_command', arguments: { cmd: `sleep 0.3; echo wider > ${outside}/escaped.txt` } }] }, { text: 'tried' }],
    });
    const root = await w.t.h.createSession();
    await root.accept('go');
    await w.t.h.settle();
    const [child] = w.t.h.store.children(root.id);
    const res = ofType((await w.t.h.store.inspect(child.id)).events, 'tool/result').find((r) => r.name === 'codex:shell');
    // A command that ends at once shows in no item of `codex exec --json`: each sleeps first (as codex.test.ts's do).
    assert.ok(res, 'the codex child ran its command');
    assert.equal(fs.existsSync(path.join(outside, 'escaped.txt')), false, `the codex child wrote outside its parent's roots: ${res.content}`);
  });
});

// Attack (decision 0122, amended s60): Codex's workspace-write writes the host's /tmp and $TMPDIR by
// default, where other programs of the user read what a child plants there; Arbor's own confined
// commands get a private /tmp. A confined Codex child gets a temp folder of its own instead.
describe('remote: a confined Codex child writes no shared /tmp, only a temp folder of its own (real Codex)', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  it('attack: `touch /tmp/…` is refused (nothing on the host); `touch "$TMPDIR/x"` lands in its private folder, gone once the child ended', async () => {
    const planted = `/tmp/arbor-escape-${randomUUID()}`;
    try {
      const cmd = `sleep 0.3; touch ${planted}; echo "slash=$?"; touch "$TMPDIR/x" && echo "tmpdir=$TMPDIR" && ls -a "$TMPDIR" && stat -c "mode=%a" "$TMPDIR"`;
      byWire(w.server, {
        chat: [{ toolCalls: [{ name: 'delegate_codex', arguments: { prompt: 'plant a file' } }] }, { text: 'parent done' }],
        responses: [{ toolCalls: [{ name: 'exec_command', arguments: { cmd } }] }, { text: 'tried' }],
      });
      const root = await w.t.h.createSession();
      await root.accept('go');
      await w.t.h.settle();
      const [child] = w.t.h.store.children(root.id);
      const res = ofType((await w.t.h.store.inspect(child.id)).events, 'tool/result').find((r) => r.name === 'codex:shell');
      assert.ok(res, 'the codex child ran its command');
      assert.equal(fs.existsSync(planted), false, `the codex child planted a file in the host's /tmp: ${res.content}`);
      assert.match(res.content, /slash=1/, res.content);
      const own = privateTmpDir(w.t.h.store.dir, child.id);
      assert.ok(
        res.content.includes(`tmpdir=${own}\n`) && /\nx\n/.test(res.content),
        `$TMPDIR is the child's own folder, and x was made in it: ${res.content}`,
      );
      assert.match(res.content, /mode=700/, res.content);
      assert.equal(fs.existsSync(own), false, 'the private folder is removed once the child ended');
    } finally {
      fs.rmSync(planted, { force: true });
    }
  });
});
