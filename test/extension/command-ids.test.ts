import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { COMMAND_IDS, type TreeNode } from '../../src/protocol';
import { chatMessageContext, treeNodeContext } from '../../webview/src/lib/context';
import { repoRoot } from '../support/repo-root';

interface Contributes {
  commands: { command: string }[];
  menus: Record<string, { command: string; when?: string }[]>;
  keybindings: { command: string }[];
}

const contributes = (JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as { contributes: Contributes }).contributes;
const node = (extra: Partial<TreeNode> = {}): TreeNode => ({
  id: 's-1',
  origin: 'user',
  depth: 0,
  status: 'running',
  tokens: { prompt: 0, completion: 0, cacheHit: 0 },
  reports: 0,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

// The command ids live in src/protocol.ts once; package.json must list them as VS Code needs.
describe("command ids: package.json contributes exactly the protocol's list", () => {
  it('the same ids, each once', () => {
    const contributed = contributes.commands.map((c) => c.command);
    assert.equal(new Set(contributed).size, contributed.length, 'package.json lists a command twice');
    assert.equal(new Set(COMMAND_IDS).size, COMMAND_IDS.length, 'COMMAND_IDS lists a command twice');
    assert.deepEqual([...contributed].sort(), [...COMMAND_IDS].sort());
  });

  it('menus and keybindings name only those ids', () => {
    const ids = new Set<string>(COMMAND_IDS);
    const used = [...Object.values(contributes.menus).flat(), ...contributes.keybindings].map((m) => m.command);
    assert.deepEqual(
      used.filter((c) => !ids.has(c)),
      [],
    );
  });

  it("every context key a webview menu tests is one the webview's payloads carry", () => {
    const payloads = [
      treeNodeContext(node({ goal: { phase: 'active', roundsStarted: 1, maxGoalRounds: 3, armed: true, objective: 'x' } })),
      treeNodeContext(
        node({
          id: 'wf.r1',
          kind: 'workflow',
          workflow: { runId: 'r1', name: 'w', description: '', phases: [], logs: [], agents: 0, running: 0, status: 'running' },
        }),
      ),
      chatMessageContext('s-1', 3, 'transcript'),
    ].map((p) => JSON.parse(p) as Record<string, unknown>);
    const keys = new Set(payloads.flatMap((p) => Object.keys(p)));
    const sections = new Set(payloads.map((p) => p.webviewSection));
    for (const item of contributes.menus['webview/context']) {
      for (const key of item.when?.match(/\barbor[A-Z]\w*/g) ?? []) assert.ok(keys.has(key), `${item.command}: no payload carries ${key}`);
      for (const [, section] of item.when?.matchAll(/webviewSection == (\w+)/g) ?? [])
        assert.ok(sections.has(section), `${item.command}: no payload has section ${section}`);
    }
  });
});
