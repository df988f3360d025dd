import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { changedBy, SETTING_KEYS, SETTING_RULES } from '../../src/extension/setting-rules';
import { repoRoot } from '../support/repo-root';

const properties = (
  JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, { scope?: string }> } };
  }
).contributes.configuration.properties;

// Issue 21.4, decision 0049: every setting applies live or says it needs a reload. The table
// is the one place that says which; the host test settings-live.test.ts checks each row in a
// running window.
describe('extension: when each arbor.* setting applies (SETTING_RULES)', () => {
  it('has one row for every setting package.json contributes, in its order, and no other', () => {
    assert.deepEqual(SETTING_KEYS, Object.keys(properties));
  });

  it('asks for a reload only for the remote programs and the placements, wired when the harness opens (every one machine-scoped)', () => {
    const reload = SETTING_KEYS.filter((k) => SETTING_RULES[k].applies === 'reload');
    assert.deepEqual(
      reload,
      SETTING_KEYS.filter((k) => k.startsWith('arbor.remote.') || k === 'arbor.placements'),
    );
    for (const k of reload) assert.equal(properties[k].scope, 'machine', k);
  });

  it('sorts a change into the live paths to apply and the reload-only settings it named', () => {
    const got = changedBy((k) => ['arbor.model.name', 'arbor.subagents.maxDepth', 'arbor.remote.codex.command', 'arbor.prices'].includes(k));
    assert.deepEqual([...got.paths].sort(), ['defaults', 'model', 'prices']);
    assert.deepEqual(got.reload, ['arbor.remote.codex.command']);
    assert.equal(got.keys.length, 4);
    const all = changedBy(() => true);
    assert.deepEqual([...all.paths].sort(), ['checkpoints', 'defaults', 'gitGuard', 'hooks', 'mcp', 'model', 'panel', 'prices', 'workflow']);
    assert.equal(all.keys.length, SETTING_KEYS.length);
  });
});
