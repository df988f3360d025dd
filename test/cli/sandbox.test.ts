// The OS sandbox through the real CLI (decision 0005): what --help promises, the issue's
// reproduction (read-only + auto writing outside and into .git), the API key kept out of a
// command's environment, and the one notice where no sandbox can start.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { arbor } from '../support/cli';
import { ModelServer } from '../support/model-server';

describe('cli: commands in the OS sandbox', () => {
  let server: ModelServer;
  let dir: string;
  let ws: string;
  let outside: string;
  let common: string[];
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => {
    server.reset();
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-cli-sandbox-')));
    ws = path.join(dir, 'ws');
    fs.mkdirSync(path.join(ws, '.git', 'hooks'), { recursive: true });
    outside = fs.mkdtempSync('/var/tmp/arbor-cli-outside-');
    common = ['--store', path.join(dir, 'store'), '--workspace', ws, '--base-url', server.baseURL, '--model', 'test-model', '--json'];
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  const toolResults = (stdout: string) =>
    stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; content?: string; isError?: boolean })
      .filter((e) => e.type === 'tool/result');

  it('--help says what each sandbox mode and approval policy allow, and whether the OS sandbox works here', async () => {
    const help = await arbor(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /read-only {8}file tools write nothing; commands run in the OS sandbox with the whole\n {19}file system read-only/);
    assert.match(
      help.stdout,
      /workspace-write {2}file tools and commands write only inside the workspace folder; \.git,\n {19}\.vscode, \.arbor, \.mcp\.json and \*\.code-workspace in it stay read-only for\n {19}commands/,
    );
    assert.match(help.stdout, /full-access {6}no OS sandbox: file tools write anywhere/);
    assert.match(
      help.stdout,
      /never {3}refused, without asking: a write to a protected path, a command the model asks to\n {10}run outside the OS sandbox, and every command when no OS sandbox can start/,
    );
    assert.match(help.stdout, /auto {4}allowed, without asking/);
    assert.match(help.stdout, /OS sandbox: active here \(bubblewrap, bwrap\)\./);
    const none = await arbor(['--help'], { ARBOR_BWRAP: path.join(dir, 'no-bwrap') });
    assert.match(none.stdout, /OS sandbox: NOT available here: bubblewrap \(.*no-bwrap\) is not installed\. Commands then need approval/);
  });

  it('read-only with --approval auto: a command cannot write outside the workspace, into .git/hooks or into the workspace', async () => {
    const command = `echo pwned > ${outside}/x.txt; echo hook > .git/hooks/pre-commit; echo in > in.txt; echo done`;
    server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command } }] }, { text: 'tried' });
    const r = await arbor(['run', ...common, '--sandbox', 'read-only', '--approval', 'auto', 'write everywhere']);
    assert.equal(r.code, 0, r.stderr);
    const [res] = toolResults(r.stdout);
    assert.match(res.content ?? '', /Read-only file system/);
    assert.equal(fs.existsSync(path.join(outside, 'x.txt')), false);
    assert.equal(fs.existsSync(path.join(ws, '.git', 'hooks', 'pre-commit')), false);
    assert.equal(fs.existsSync(path.join(ws, 'in.txt')), false);
  });

  it("the API key the CLI uses is not in a command's environment", async () => {
    server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'env > env.txt' } }] }, { text: 'listed' });
    const r = await arbor(['run', ...common, 'list the environment'], {
      ARBOR_API_KEY: 'sk-cli-secret-value',
      OPENAI_API_KEY: 'sk-other-secret-value',
      KEEP_ME: 'yes',
    });
    assert.equal(r.code, 0, r.stderr);
    const env = fs.readFileSync(path.join(ws, 'env.txt'), 'utf8');
    assert.match(env, /^KEEP_ME=yes$/m);
    assert.ok(!env.includes('sk-cli-secret-value') && !env.includes('sk-other-secret-value'), 'a key leaked into the command environment');
  });

  it('where no OS sandbox can start, says so once and refuses every command under --approval never', async () => {
    server.enqueue(
      {
        toolCalls: [
          { name: 'run_command', arguments: { command: 'echo ran > ran.txt' } },
          { name: 'run_command', arguments: { command: 'echo ran > ran2.txt' } },
        ],
      },
      { text: 'could not' },
    );
    const r = await arbor(['run', ...common, 'run two commands'], { ARBOR_BWRAP: path.join(dir, 'no-bwrap') });
    assert.equal(r.code, 0, r.stderr);
    const notices = r.stderr.split('\n').filter((l) => l.startsWith('arbor: no OS sandbox'));
    assert.deepEqual(notices, [
      `arbor: no OS sandbox: bubblewrap (${path.join(dir, 'no-bwrap')}) is not installed; every command is refused (--approval never). ` +
        'To run commands confined, install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap).',
    ]);
    assert.deepEqual(
      toolResults(r.stdout).map((e) => e.isError),
      [true, true],
    );
    assert.equal(fs.existsSync(path.join(ws, 'ran.txt')), false);
    assert.equal(fs.existsSync(path.join(ws, 'ran2.txt')), false);
  });
});
