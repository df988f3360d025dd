import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  describeIgnored,
  type InspectPolicy,
  narrowedPolicy,
  POLICY_DEFAULTS,
  POLICY_KEYS,
  POLICY_RANKS,
  type PolicyKey,
  readPolicySettings,
  SaidOnce,
  userPolicy,
  widerThan,
} from '../../src/extension/policy-settings';
import { repoRoot } from '../support/repo-root';

type Layer = { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown };
const inspectOf =
  (layers: Partial<Record<PolicyKey, Layer>>): InspectPolicy =>
  (key) =>
    layers[key];

const properties = (
  JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, { default?: unknown; enum?: unknown[]; type?: string; markdownDescription?: string }> } };
  }
).contributes.configuration.properties;

/** Every value of `key`, narrowest first, as settings.json holds it. */
const valuesOf = (key: PolicyKey): unknown[] =>
  Object.entries(POLICY_RANKS[key] as Record<string, number>)
    .sort((a, b) => a[1] - b[1])
    .map(([name]) => (typeof POLICY_DEFAULTS[key] === 'boolean' ? name === 'true' : name));
const rankOf = (key: PolicyKey, v: unknown): number => (POLICY_RANKS[key] as Record<string, number>)[String(v)];

// Decision 0125 (amended): a workspace's (a cloned repository's) .vscode/settings.json may narrow the
// user's sandbox, approval and network, never widen them.
describe('extension: arbor.policy.* — a workspace value only narrows the user’s', () => {
  it('ranks exactly the values package.json offers, with its defaults, and each description says a workspace only narrows', () => {
    for (const key of POLICY_KEYS) {
      const p = properties[`arbor.${key}`];
      assert.ok(p, key);
      assert.deepEqual(valuesOf(key).map(String).sort(), (p.enum ?? [false, true]).map(String).sort(), key);
      assert.deepEqual(POLICY_DEFAULTS[key], p.default, key);
      assert.match(p.markdownDescription ?? '', /only narrow/, `${key} says a workspace can only narrow it`);
    }
  });

  for (const key of POLICY_KEYS) {
    it(`${key}: every (user, workspace, folder) — never wider than the user's (or the default), the narrowest that may count wins, the wider ones said`, () => {
      const layer = [undefined, ...valuesOf(key)];
      let cases = 0;
      for (const user of layer)
        for (const ws of layer)
          for (const folder of layer) {
            cases++;
            const what = JSON.stringify({ user, ws, folder });
            const { value, ignored } = narrowedPolicy(key, inspectOf({ [key]: { globalValue: user, workspaceValue: ws, workspaceFolderValue: folder } }));
            const top = rankOf(key, user ?? POLICY_DEFAULTS[key]);
            const counted = [ws, folder].filter((v) => v !== undefined && rankOf(key, v) <= top);
            const wider = [ws, folder].filter((v) => v !== undefined && rankOf(key, v) > top);
            assert.ok(rankOf(key, value) <= top, `never wider than the user's: ${what} gave ${value}`);
            assert.equal(rankOf(key, value), Math.min(top, ...counted.map((v) => rankOf(key, v))), `a narrower workspace or folder value applies: ${what}`);
            assert.deepEqual(
              ignored.map((i) => i.value),
              wider,
              `the wider ones are ignored and reported: ${what}`,
            );
            for (const i of ignored) assert.equal(i.user, user ?? POLICY_DEFAULTS[key]);
          }
      assert.equal(cases, layer.length ** 3);
    });
  }

  it('the attack: full-access, network and ask from a workspace over the user defaults give workspace-write, no network, ask', () => {
    const got = readPolicySettings(
      inspectOf({
        'policy.sandbox': { workspaceValue: 'full-access' },
        'policy.network': { workspaceValue: true, workspaceFolderValue: true },
        'policy.approval': { workspaceValue: 'ask' },
      }),
    );
    assert.deepEqual([got.sandbox, got.network, got.approval], ['workspace-write', false, 'ask']);
    assert.deepEqual(
      got.ignored.map((i) => [i.key, i.layer, i.value]),
      [
        ['policy.sandbox', 'workspaceValue', 'full-access'],
        ['policy.network', 'workspaceValue', true],
        ['policy.network', 'workspaceFolderValue', true],
      ],
    );
  });

  it("the user's own wider values hold when the workspace says the same; a workspace narrows each of them", () => {
    const user = { 'policy.sandbox': 'full-access', 'policy.network': true, 'policy.approval': 'ask' } as const;
    const same = readPolicySettings(inspectOf(Object.fromEntries(POLICY_KEYS.map((k) => [k, { globalValue: user[k], workspaceValue: user[k] }]))));
    assert.deepEqual([same.sandbox, same.network, same.approval, same.ignored], ['full-access', true, 'ask', []]);
    const narrowed = readPolicySettings(
      inspectOf({
        'policy.sandbox': { globalValue: 'full-access', workspaceValue: 'read-only' },
        'policy.network': { globalValue: true, workspaceValue: false },
        'policy.approval': { globalValue: 'ask', workspaceFolderValue: 'never' },
      }),
    );
    assert.deepEqual([narrowed.sandbox, narrowed.network, narrowed.approval, narrowed.ignored], ['read-only', false, 'never', []]);
    const askOverNever = readPolicySettings(inspectOf({ 'policy.approval': { globalValue: 'never', workspaceValue: 'ask' } }));
    assert.equal(askOverNever.approval, 'never', 'a workspace ask does not lift the user’s never');
    assert.deepEqual(
      askOverNever.ignored.map((i) => [i.key, i.value, i.user]),
      [['policy.approval', 'ask', 'never']],
    );
  });

  it("the picker's test: a workspace scope is offered only for a choice no wider than the user's own value (or the default)", () => {
    assert.equal(userPolicy('policy.sandbox', undefined), 'workspace-write');
    assert.equal(userPolicy('policy.sandbox', 'yolo'), 'workspace-write');
    assert.equal(widerThan('policy.sandbox', 'full-access', userPolicy('policy.sandbox', undefined)), true);
    assert.equal(widerThan('policy.sandbox', 'read-only', userPolicy('policy.sandbox', undefined)), false);
    assert.equal(widerThan('policy.sandbox', 'full-access', userPolicy('policy.sandbox', 'full-access')), false);
    assert.equal(widerThan('policy.approval', 'ask', userPolicy('policy.approval', 'never')), true);
    assert.equal(widerThan('policy.approval', 'never', userPolicy('policy.approval', undefined)), false);
  });

  it('a folder cannot widen back what the workspace narrowed', () => {
    const got = narrowedPolicy(
      'policy.sandbox',
      inspectOf({ 'policy.sandbox': { globalValue: 'full-access', workspaceValue: 'read-only', workspaceFolderValue: 'full-access' } }),
    );
    assert.equal(got.value, 'read-only');
  });

  it('a value that is none of the setting’s (a hand-edited settings.json) counts as absent, at any layer', () => {
    for (const bad of ['FULL-ACCESS', 'full-access ', 'true', 1, null, {}, ['full-access'], 'constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const got = readPolicySettings(
        inspectOf(Object.fromEntries(POLICY_KEYS.map((k) => [k, { globalValue: bad, workspaceValue: bad, workspaceFolderValue: bad }]))),
      );
      assert.deepEqual([got.sandbox, got.network, got.approval, got.ignored], ['workspace-write', false, 'ask', []], JSON.stringify(bad));
    }
  });

  it('the log line names the setting, the value, where, why, how to widen and the code; each is said once', () => {
    const [i] = narrowedPolicy('policy.sandbox', inspectOf({ 'policy.sandbox': { workspaceValue: 'full-access' } })).ignored;
    const line = describeIgnored(i);
    for (const part of [
      'arbor.policy.sandbox',
      '"full-access"',
      '.vscode/settings.json',
      '"workspace-write"',
      'only narrow',
      'user settings',
      'POLICY_WIDER_IGNORED',
    ]) {
      assert.ok(line.includes(part), `${part} in: ${line}`);
    }
    const once = new SaidOnce();
    assert.deepEqual(once.fresh([line, 'b']), [line, 'b']);
    assert.deepEqual(once.fresh([line, 'b']), []);
    assert.deepEqual(once.fresh(['c', line]), ['c']);
  });
});
