import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UsageError } from '../../../src/cli/args';
import { harnessConfig } from '../../../src/cli/config';
import { placementsFromConfig } from '../../../src/cli/placement-config';
import { checkPlacements, readPlacements } from '../../../src/core/placement/settings';
import { PlacementError } from '../../../src/core/placement/types';
import { readPlacementSettings } from '../../../src/extension/placement-settings';

// Placements as configuration (decision 0071): one table of field rules for both hosts; every
// problem is a BAD_PLACEMENT naming the entry and saying what to write instead.

const SSH = {
  name: 'box',
  kind: 'ssh',
  host: 'box.example',
  user: 'me',
  port: 2222,
  identityFile: '~/.ssh/id_box',
  sshOptions: ['UserKnownHostsFile=~/.ssh/kh'],
};
const POD = { name: 'pod', kind: 'container', image: 'localhost/arbor:0.1.0', runArgs: ['--network=host'], passApiKey: true, env: { TZ: 'UTC' } };

describe('placement settings: the field rules', () => {
  it('keeps valid ssh and container entries as given', () => {
    const r = readPlacements([SSH, POD], 'arbor.placements');
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.placements, [SSH, POD]);
  });

  const BAD: [string, Record<string, unknown>, RegExp][] = [
    ['a name that is not a word', { ...SSH, name: 'my box' }, /"name" must be 1–40 letters/],
    ['the reserved name local', { ...SSH, name: 'local' }, /not "local"/],
    ['an unknown kind', { ...SSH, kind: 'vm' }, /"kind" must be one of "ssh", "container"/],
    ['a misspelt field', { ...SSH, hots: 'x' }, /"hots" is not a placement field \(known: host,/],
    ['a field of the other kind', { ...SSH, image: 'x' }, /"image" applies to container placements, not ssh: remove it/],
    ['an ssh placement without a host', { name: 'box', kind: 'ssh' }, /needs "host"/],
    ['a container without an image', { name: 'pod', kind: 'container' }, /needs "image"/],
    ['a port out of range', { ...SSH, port: 0 }, /"port" must be a whole number from 1 to 65535/],
    ['a host that ssh would read as an option', { ...SSH, host: '-oProxyCommand=touch /tmp/x' }, /"host" must be .*not starting with "-"/],
    ['a user with a host in it', { ...SSH, user: 'me@other' }, /"user" must be a login name/],
    ['an ssh option that turns prompting on', { ...SSH, sshOptions: ['BatchMode=no'] }, /BatchMode stays yes/],
    ['an ssh flag instead of an -o option', { ...SSH, sshOptions: ['-oProxyCommand=sh'] }, /"sshOptions" must be a list of ssh -o options/],
    ['an image that reads as an engine flag', { ...POD, image: '--privileged' }, /"image" must be an image name/],
    ['Arbor’s key in env', { ...POD, env: { ARBOR_API_KEY: 'sk-x' } }, /set "passApiKey": true instead/],
    ['another model key in env', { ...POD, env: { OPENAI_API_KEY: 'sk-x' } }, /set "passApiKey": true instead/],
    ['an env name that is not a variable', { ...POD, env: { 'A-B': '1' } }, /"env" must be a map of variable names/],
    ['a base URL that is not http(s)', { ...POD, baseUrl: 'file:///etc/passwd' }, /"baseUrl" must be an http\(s\) URL/],
    ['passApiKey as a string', { ...POD, passApiKey: 'yes' }, /"passApiKey" must be true or false/],
  ];
  for (const [what, entry, said] of BAD)
    it(`refuses ${what}, naming the entry and the fix`, () => {
      const r = readPlacements([{ ...POD, name: 'good' }, entry], 'arbor.placements');
      assert.equal(r.placements.length, 1, 'the good entry stays');
      assert.equal(r.problems.length, 1);
      const p = r.problems[0]!;
      assert.ok(p instanceof PlacementError);
      assert.equal(p.code, 'BAD_PLACEMENT');
      assert.match(p.message, /^BAD_PLACEMENT: arbor\.placements\[1\]/);
      assert.match(p.message, said);
      assert.match(p.message, /this placement is left out/);
    });

  it('refuses a name used twice, and a value that is not a list', () => {
    assert.match(readPlacements([SSH, { ...POD, name: 'box' }], 'x').problems[0]!.message, /the name "box" is used twice/);
    assert.match(readPlacements({ box: SSH }, 'x').problems[0]!.message, /x must be a list/);
    assert.throws(
      () => checkPlacements([{ ...SSH, port: 'x' }], 'cfg'),
      (e: unknown) => e instanceof PlacementError && e.code === 'BAD_PLACEMENT',
    );
  });
});

describe('placement settings: where they come from', () => {
  it('VS Code: the user’s own arbor.placements only, none in Restricted Mode', () => {
    const inspect = (key: string) =>
      key === 'placements' ? { globalValue: [SSH], workspaceValue: [{ ...SSH, name: 'evil', host: 'attacker.example' }] } : undefined;
    assert.deepEqual(readPlacementSettings(inspect, true), { placements: [SSH], problems: [] });
    assert.deepEqual(readPlacementSettings(inspect, false), { problems: [] });
    const bad = readPlacementSettings(() => ({ globalValue: [{ ...SSH, port: -1 }] }), true);
    assert.equal(bad.placements, undefined);
    assert.match(bad.problems[0]!, /arbor\.placements\[0\] \("box"\): "port"/);
  });

  it('CLI: placements in the --config file reach the harness config; a bad one refuses the start', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-placement-cfg-'));
    try {
      const file = path.join(dir, 'config.json');
      fs.writeFileSync(file, JSON.stringify({ placements: [SSH, POD] }));
      const args = {
        positionals: [],
        options: new Map<string, string | true>([
          ['config', file],
          ['base-url', 'http://127.0.0.1:9/v1'],
          ['workspace', dir],
        ]),
      };
      assert.deepEqual(harnessConfig(args, {}).placements, [SSH, POD]);
      fs.writeFileSync(file, JSON.stringify({ placements: [{ ...SSH, sshOptions: ['BatchMode=no'] }] }));
      assert.throws(
        () => placementsFromConfig(args, {}),
        (e: unknown) => e instanceof UsageError && /config\.json: placements\[0\] \("box"\)/.test(e.message),
      );
      fs.writeFileSync(file, JSON.stringify({ remote: {} }));
      assert.equal(placementsFromConfig(args, {}), undefined);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
