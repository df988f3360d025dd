import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { pidNamespace } from '../../src/core/remote/pid-namespace';
import { type AcpPeer, startAcp } from '../support/acp-peer';
import { cliWorld } from '../support/cli';
import { goneWithin, killLeftovers, type Leaver, leaver, living, sleepersRunning } from '../support/leftovers';

// Issue 20 (finding 6b): `arbor acp` whose session delegated to an ACP agent (`acp:<name>`) that
// ignores `session/cancel` and SIGTERM and leaves sleepers behind. Ctrl+C stops it, bounded,
// and exits 130; nothing of the agent is left.
describe('acp: Ctrl+C of arbor acp stops its remote children', function () {
  this.timeout(60_000);
  const w = cliWorld('arbor-acp-int-', { realDir: true });
  let peer: AcpPeer | undefined;
  let l: Leaver;
  before(async () => {
    const ns = await pidNamespace();
    if (!ns.available) throw new Error(`These tests need bubblewrap, and ${ns.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
  });
  beforeEach(() => (l = leaver(w.dir)));
  afterEach(() => {
    peer?.child.kill('SIGKILL');
    peer = undefined;
    killLeftovers(l.token);
  });

  it('Ctrl+C mid-delegation: exit 130, a line saying what it did, none of the agent’s processes left', async () => {
    const cfg = path.join(w.dir, 'config.json');
    fs.writeFileSync(cfg, JSON.stringify({ remote: { acp: [l.acp] } }));
    w.server.setFallback((body) =>
      body.messages.at(-1)?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'delegate_acp_leaver', arguments: { prompt: 'start it' } }] },
    );
    peer = await startAcp([...w.common, '--config', cfg]);
    const { sessionId } = await peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    void peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'go' }] }).catch(() => undefined);
    await sleepersRunning(l);
    assert.ok(living(l.token).length >= 3, 'the agent and both sleepers run');
    peer.child.kill('SIGINT');
    assert.equal(await peer.exited, 130, peer.stderr());
    assert.match(peer.stderr(), /arbor: interrupted \(Ctrl\+C\): closing the running turns and stopping 1 remote program\(s\)/);
    assert.match(peer.stderr(), /arbor: interrupted \(Ctrl\+C\): the running turns ended interrupted/);
    assert.deepEqual(await goneWithin(l.token, 1000), []);
  });
});
