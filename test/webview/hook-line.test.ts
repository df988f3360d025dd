// Hook runs in the built webview (headless chromium, scripted host; decision 0057): each is one
// compact line, a block in the warning colour, a quiet run muted; a Stop hook's reason to go on
// is its own message, "Hook: go on", never one the user typed.
import * as assert from 'node:assert/strict';
import type { TranscriptEntry } from '../../src/protocol';
import { FIXTURE_AT, FIXTURE_SETTINGS, rootNode, webviewFixture } from '../support/webview-fixture';

const SETTINGS = FIXTURE_SETTINGS;
const T = FIXTURE_AT;
const ROOT = 's-mx5bfxcz-2d979a23';
const NODE = rootNode(ROOT, { tokens: { prompt: 1000, completion: 100, cacheHit: 0 }, title: 'clean the build' });

describe('webview: hook runs in the chat (decision 0057)', () => {
  const w = webviewFixture('arbor-webview-hooks-');
  const { send } = w;

  it('a blocked run is one warning line; a quiet one is muted; a Stop reason reads "Hook: go on"', async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 300, height: 800 } });
    const entries: TranscriptEntry[] = [
      { kind: 'user', seq: 0, at: T, source: 'user', text: 'clean the build' },
      { kind: 'assistant', seq: 1, at: T, text: '', toolCalls: [{ id: 'c1', name: 'run_command', arguments: '{"command":"rm -rf build"}' }] },
      { kind: 'hook', seq: 2, at: T, outcome: 'blocked', text: "hook PreToolUse blocked run_command: 'rm -rf' is blocked in this workspace" },
      { kind: 'tool', seq: 3, at: T, callId: 'c1', name: 'run_command', content: 'A PreToolUse hook blocked run_command', isError: true },
      { kind: 'hook', seq: 4, at: T, outcome: 'ok', text: 'hook Stop ran (12 ms)' },
      { kind: 'user', seq: 5, at: T, source: 'hook', text: 'run the tests too' },
    ];
    await send(
      { type: 'state/snapshot', nodes: [NODE], selected: ROOT, settings: SETTINGS, approvals: [] },
      { type: 'transcript/reset', sessionId: ROOT, entries, hasMore: false },
    );
    const lines = await w.page.evaluate<{ cls: string; text: string; color: string; height: number }[]>(
      `[...document.querySelectorAll('.chat .hook')].map((e) => ({ cls: e.className, text: e.textContent.trim(), color: getComputedStyle(e).color, height: e.getBoundingClientRect().height }))`,
    );
    assert.equal(lines.length, 2, JSON.stringify(lines));
    assert.match(lines[0].cls, /\bblocked\b/);
    assert.match(lines[0].text, /^hook PreToolUse blocked run_command: 'rm -rf' is blocked/);
    assert.notEqual(lines[0].color, lines[1].color, 'a block stands out from a quiet run');
    assert.ok(lines[0].height < 60, `at most three short lines at 300 px: ${lines[0].height}px`);
    const who = await w.page.evaluate<string[]>(`[...document.querySelectorAll('.chat article .who')].map((e) => e.textContent.trim())`);
    assert.ok(
      who.some((x) => x.startsWith('Hook: go on')),
      JSON.stringify(who),
    );
    assert.equal(who.filter((x) => x.startsWith('You')).length, 1, 'only the prompt the user typed reads as theirs');
  });
});
