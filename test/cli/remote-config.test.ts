import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UsageError } from '../../src/cli/args';
import { remoteFromConfig } from '../../src/cli/remote-config';

// The CLI's equivalent of arbor.remote.turnTimeoutMinutes (decision 0044): `remote.turnTimeoutMinutes`
// in the --config file, for every program and ACP agent without a `turnTimeoutMs` of its own.
describe('cli: remote programs from the config file — the wall clock of a remote turn', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-rcfg-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const read = (remote: unknown) => {
    const file = path.join(dir, 'config.json');
    fs.writeFileSync(file, JSON.stringify({ remote }));
    return remoteFromConfig({ positionals: [], options: new Map([['config', file]]) }, {});
  };

  it('remote.turnTimeoutMinutes applies to each program and agent that does not set turnTimeoutMs', () => {
    const got = read({
      turnTimeoutMinutes: 0.5,
      codex: { command: 'codex' },
      claudeCode: { command: 'claude', turnTimeoutMs: 9000 },
      acp: [
        { name: 'a', command: 'a' },
        { name: 'b', command: 'b', turnTimeoutMs: 1000 },
      ],
    });
    assert.equal(got?.codex?.turnTimeoutMs, 30_000);
    assert.equal(got?.claudeCode?.turnTimeoutMs, 9000);
    assert.deepEqual(
      got?.acp?.map((a) => a.turnTimeoutMs),
      [30_000, 1000],
    );
    assert.equal(read({ codex: { command: 'codex' } })?.codex?.turnTimeoutMs, undefined, 'absent: the default applies');
  });

  it('a limit that is not a positive number is a usage error that says what to write', () => {
    assert.throws(
      () => read({ turnTimeoutMinutes: 0, codex: { command: 'codex' } }),
      (e: unknown) => e instanceof UsageError && /remote\.turnTimeoutMinutes must be a positive number of minutes/.test(e.message),
    );
    assert.throws(
      () => read({ codex: { command: 'codex', turnTimeoutMs: 'soon' } }),
      (e: unknown) => e instanceof UsageError && /remote\.codex\.turnTimeoutMs must be a positive number of milliseconds/.test(e.message),
    );
  });
});
