import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { acpScript, shLine, shq } from '../../../src/core/placement/shell';

// The remote side is reached through a login shell that parses one command line (ssh joins its
// arguments with spaces). Decision 0071's claim: nothing a setting or a path holds is parsed as
// shell there. These strings try to break it, through a real `sh -c` as the login shell would run it.

const HOSTILE = [
  "it's",
  '$(touch PWNED)',
  '`touch PWNED`',
  "'; touch PWNED; '",
  '"; touch PWNED; "',
  'a\nb; touch PWNED',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, the very thing under test
  '$HOME ${PATH} \\ * ? [a] ~ ! # & | ; < >',
  '-e',
  '',
];

describe('placement: remote command lines quote every value as one word', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-placement-sh-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('shq and shLine: each hostile value arrives as itself, and nothing runs', () => {
    for (const v of HOSTILE) {
      assert.equal(execFileSync('sh', ['-c', `printf %s ${shq(v)}`], { cwd: dir, encoding: 'utf8' }), v);
      const line = shLine('printf "%s|" "$@"', [v, 'next']);
      assert.equal(execFileSync('sh', ['-c', line], { cwd: dir, encoding: 'utf8' }), `${v}|next|`);
    }
    assert.deepEqual(fs.readdirSync(dir), [], 'no injected command ran');
  });

  it('acpScript: a placement’s env values are exported as given, the arbor command and paths are arguments', () => {
    const fake = path.join(dir, 'fake arbor');
    fs.writeFileSync(fake, '#!/bin/sh\nprintf "%s\\n" "$V" "$@"\n', { mode: 0o755 });
    for (const v of HOSTILE.filter((x) => !x.includes('\n'))) {
      const line = shLine(acpScript({ env: { V: v } }), [fake, path.join(dir, "ws'$(x)"), path.join(dir, 'store'), '--model', v]);
      const out = execFileSync('sh', ['-c', line], { cwd: dir, encoding: 'utf8' });
      assert.equal(out, `${v}\nacp\n--workspace\n${path.join(dir, "ws'$(x)")}\n--store\n${path.join(dir, 'store')}\n--model\n${v}\n`);
    }
    assert.deepEqual(fs.readdirSync(dir).sort(), ['fake arbor', 'store'], 'no injected command ran');
  });

  it('with passApiKey the key is read from stdin into the environment, never an argument', () => {
    const fake = path.join(dir, 'arbor');
    fs.writeFileSync(fake, '#!/bin/sh\nprintf "%s|%s" "$ARBOR_API_KEY" "$*"\n', { mode: 0o755 });
    const key = "sk-'$(touch PWNED)";
    const line = shLine(acpScript({ passApiKey: true }), [fake, dir, path.join(dir, 'store')]);
    assert.equal(line.includes(key), false);
    const out = execFileSync('sh', ['-c', line], { cwd: dir, encoding: 'utf8', input: `${key}\n` });
    assert.equal(out, `${key}|acp --workspace ${dir} --store ${path.join(dir, 'store')}`);
    assert.equal(fs.existsSync(path.join(dir, 'PWNED')), false);
  });
});
