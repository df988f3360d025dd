// The ACP driver records the program's session (`sink.external`, a durable append) while the
// session's mode is set (commit c348072): both run at once, so a failed append must neither go
// unhandled while `session/set_mode` is still on its way (Node ends the process on that) nor be lost.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { acpDriver } from '../../../src/core/remote/acp';
import { TurnBounds } from '../../../src/core/subagent/remote-bounds';
import type { RemoteSink } from '../../../src/core/subagent/remote-driver';

const FIXTURE = path.join(__dirname, '..', '..', 'support', 'acp-fixture-agent.js');

describe('ACP driver: the session recorded while its mode is set', function () {
  this.timeout(30_000);

  it('a failed record is the turn’s error, never an unhandled rejection while set_mode is answered', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    // (Mocha's own listener would fail the test from outside; this one sees it first and alone.)
    const theirs = process.listeners('unhandledRejection');
    process.removeAllListeners('unhandledRejection');
    process.on('unhandledRejection', onUnhandled);
    try {
      const noop = () => undefined;
      const sink: RemoteSink = {
        delta: noop,
        text: noop,
        reasoning: noop,
        model: noop,
        toolCall: async () => undefined,
        toolResult: async () => undefined,
        usage: noop,
        external: () => Promise.reject(new Error('STORE_CLOSED: the log could not be written')),
        skipped: noop,
        bounds: new TurnBounds(),
        cut: noop,
        refused: noop,
      };
      const driver = acpDriver({
        name: 'fix',
        command: process.execPath,
        args: [FIXTURE],
        env: { ACP_SCENARIO: 'modes' },
        graceMs: 800,
        modes: { 'read-only': 'ro', 'workspace-write': 'ask', 'full-access': 'yolo' },
      });
      const out = await driver.runTurn(
        { childId: 'c1', prompt: 'hi', cwd: process.cwd(), sandbox: 'read-only', approvalPolicy: 'never', signal: new AbortController().signal },
        sink,
      );
      await driver.close();
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(unhandled.map(String), []);
      assert.equal(out.stopReason, 'error');
      assert.match(String(out.error), /STORE_CLOSED/);
    } finally {
      process.removeListener('unhandledRejection', onUnhandled);
      for (const l of theirs) process.on('unhandledRejection', l as (r: unknown) => void);
    }
  });
});
