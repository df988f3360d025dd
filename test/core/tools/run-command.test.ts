import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRunCommandTool } from '../../../src/core/tools/run-command';
import { scriptedApproval } from '../../support/scripted-approval';
import { call, isAlive, makeWorkspace, type Workspace, waitUntil } from './fixture';

const posix = process.platform !== 'win32';

(posix ? describe : describe.skip)('run_command', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
  });
  afterEach(() => ws.cleanup());
  const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300 });
  const allow = () => scriptedApproval([], 'allow');

  const pidIn = (rel: string): number => Number(fs.readFileSync(ws.at(rel), 'utf8').trim());

  // Approval decides only whether a command may run outside the OS sandbox (decision 0005):
  // when the model asks for it, or when no sandbox can start (command-sandbox.test.ts).
  describe('approval to run outside the OS sandbox', () => {
    const out = (command: string) => ({ command, outsideSandbox: true, justification: 'it needs the network' });

    it('asks the approval port, then runs in the workspace root with exit code and output', async () => {
      const port = allow();
      const r = await call(tool, out('echo hello; pwd; echo oops >&2'), ws.ctx({ approvalPolicy: 'ask', approval: port }));
      assert.deepEqual(r, { isError: false, content: `Exit code: 0\n--- stdout ---\nhello\n${ws.root}\n--- stderr ---\noops` });
      assert.equal(port.requests.length, 1);
      assert.deepEqual(port.requests[0], {
        sessionId: 'S1',
        tool: 'run_command',
        summary: '$ echo hello; pwd; echo oops >&2',
        reason:
          'the model asks to run this command outside the OS sandbox (workspace-write) because: "it needs the network"; ' +
          'it would run unconfined, with your permissions and the network',
        target: { kind: 'command', command: 'echo hello; pwd; echo oops >&2' },
      });
    });

    it('does not run the command when the user denies, and says it can run confined instead', async () => {
      const port = scriptedApproval(['deny']);
      const r = await call(tool, out('touch ran.txt'), ws.ctx({ approvalPolicy: 'ask', approval: port }));
      assert.equal(r.code, 'APPROVAL_DENIED');
      assert.match(r.content, /^run_command: approval was refused by the user, so the command did not run\. Run it without outsideSandbox \(confined\)/);
      assert.equal(port.requests.length, 1);
      assert.ok(!fs.existsSync(ws.at('ran.txt')));
    });

    it('does not ask, and does not run, under policy never or without a port', async () => {
      const port = allow();
      const never = await call(tool, out('touch ran.txt'), ws.ctx({ approvalPolicy: 'never', approval: port }));
      assert.equal(never.code, 'APPROVAL_DENIED');
      assert.match(never.content, /approval policy is "never"/);
      assert.equal(port.requests.length, 0);
      const noPort = await call(tool, out('touch ran.txt'), ws.ctx({ approvalPolicy: 'ask' }));
      assert.equal(noPort.code, 'APPROVAL_DENIED');
      assert.ok(!fs.existsSync(ws.at('ran.txt')));
    });

    it('runs without asking in full-access', async () => {
      const port = scriptedApproval([], 'deny');
      const r = await call(tool, { command: 'echo free' }, ws.ctx({ sandbox: 'full-access', approvalPolicy: 'ask', approval: port }));
      assert.equal(r.content, 'Exit code: 0\n--- stdout ---\nfree');
      const asked = await call(tool, out('echo free'), ws.ctx({ sandbox: 'full-access', approvalPolicy: 'ask', approval: port }));
      assert.equal(asked.content, 'Exit code: 0\n--- stdout ---\nfree');
      assert.equal(port.requests.length, 0);
    });

    it('in read-only and workspace-write a confined command runs without asking, under policy never too', async () => {
      const port = scriptedApproval([], 'deny');
      for (const sandbox of ['read-only', 'workspace-write'] as const) {
        const r = await call(tool, { command: 'echo confined' }, ws.ctx({ sandbox, approvalPolicy: 'never', approval: port }));
        assert.equal(r.content, 'Exit code: 0\n--- stdout ---\nconfined', sandbox);
      }
      assert.equal(port.requests.length, 0);
    });

    it('an abort while the approval is pending denies it and runs nothing', async () => {
      const ac = new AbortController();
      const port = scriptedApproval(() => new Promise(() => undefined)); // never answers
      setTimeout(() => ac.abort(), 50);
      const r = await call(tool, out('touch ran.txt'), ws.ctx({ approvalPolicy: 'ask', approval: port, signal: ac.signal }));
      assert.equal(r.isError, true);
      assert.ok(!fs.existsSync(ws.at('ran.txt')));
    });
  });

  describe('running', () => {
    const full = () => ws.ctx({ sandbox: 'full-access' });

    it('reports a non-zero exit as an error result with the code', async () => {
      const r = await call(tool, { command: 'echo out; exit 3' }, full());
      assert.equal(r.isError, true);
      assert.equal(r.code, 'EXIT_NONZERO');
      assert.equal(r.content, 'Exit code: 3\n--- stdout ---\nout');
    });

    it('runs in a cwd inside the workspace; refuses one outside or missing', async () => {
      fs.mkdirSync(ws.at('sub'));
      assert.equal((await call(tool, { command: 'pwd', cwd: 'sub' }, full())).content, `Exit code: 0\n--- stdout ---\n${ws.at('sub')}`);
      const outside = await call(tool, { command: 'pwd', cwd: '../outside' }, ws.ctx({ approvalPolicy: 'ask', approval: allow() }));
      assert.equal(outside.code, 'OUTSIDE_WORKSPACE');
      assert.equal((await call(tool, { command: 'pwd', cwd: 'nope' }, full())).code, 'NOT_FOUND');
    });

    it('closes stdin, so a command waiting for input ends at once', async () => {
      const started = Date.now();
      const r = await call(tool, { command: 'cat; echo done' }, full());
      assert.equal(r.content, 'Exit code: 0\n--- stdout ---\ndone');
      assert.ok(Date.now() - started < 5000);
    });

    it('kills the whole process group on timeout', async () => {
      const started = Date.now();
      const r = await call(tool, { command: 'echo $$ > shell.pid; sleep 30 & echo $! > bg.pid; echo started; sleep 30', timeoutMs: 500 }, full());
      assert.equal(r.code, 'TIMEOUT');
      assert.match(r.content, /^Timed out after 500 ms: the command and every process it started were killed\.\n--- stdout ---\nstarted$/);
      assert.ok(Date.now() - started < 5000, 'returned promptly');
      assert.ok(await waitUntil(() => !isAlive(pidIn('shell.pid'))), 'the shell is dead');
      assert.ok(await waitUntil(() => !isAlive(pidIn('bg.pid'))), 'its background child is dead');
    });

    it('escalates to SIGKILL for processes that ignore SIGTERM', async () => {
      const r = await call(tool, { command: "trap '' TERM; sleep 30 & echo $! > bg.pid; sleep 30", timeoutMs: 300 }, full());
      assert.equal(r.code, 'TIMEOUT');
      assert.ok(await waitUntil(() => !isAlive(pidIn('bg.pid'))), 'the TERM-proof child is dead');
    });

    it('kills the process group when the turn is aborted', async () => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 300);
      const started = Date.now();
      const r = await call(tool, { command: 'sleep 30 & echo $! > bg.pid; sleep 30' }, ws.ctx({ sandbox: 'full-access', signal: ac.signal }));
      assert.equal(r.code, 'CANCELLED');
      assert.match(r.content, /^Cancelled: the turn was interrupted/);
      assert.ok(Date.now() - started < 5000);
      assert.ok(await waitUntil(() => !isAlive(pidIn('bg.pid'))));
    });

    it('does not wait forever for a background process that keeps the output open', async () => {
      const started = Date.now();
      const r = await call(tool, { command: 'sleep 30 & echo $! > bg.pid; echo quick' }, full());
      assert.equal(r.isError, false, r.content);
      assert.match(r.content, /^Exit code: 0\n\[Background processes still holding the output after the shell exited were killed\.\]\n--- stdout ---\nquick$/);
      assert.ok(Date.now() - started < 5000);
      assert.ok(await waitUntil(() => !isAlive(pidIn('bg.pid'))));
    });

    it('caps stdout and stderr, keeping the beginning and the end', async () => {
      const capped = createRunCommandTool({ maxOutputBytes: 1000 });
      const r = await call(
        capped,
        { command: "printf 'BEGIN'; head -c 100000 /dev/zero | tr '\\0' a; printf 'END'; head -c 5000 /dev/zero | tr '\\0' e >&2" },
        full(),
      );
      const stdout = r.content.split('--- stdout ---\n')[1].split('\n--- stderr ---')[0];
      assert.match(stdout, /^BEGINa+\n\[… 99008 bytes omitted \(output is capped at 1000 bytes: first and last halves kept\) …\]\na+END$/);
      assert.ok(r.content.length < 2 * 1000 + 400, `content is ${r.content.length} chars`);
      assert.match(r.content, /--- stderr ---\ne+\n\[… 4000 bytes omitted/);
    });

    it('reports a command killed by a signal', async () => {
      const r = await call(tool, { command: 'kill -9 $$' }, full());
      assert.equal(r.isError, true);
      assert.match(r.content, /^Terminated by signal SIGKILL/);
    });

    it('refuses an empty command and an out-of-range timeout', async () => {
      assert.match((await call(tool, { command: '  ' }, full())).content, /'command' is empty/);
      const r = await call(tool, { command: 'true', timeoutMs: 600001 }, full());
      assert.equal(r.code, 'INVALID_ARGUMENTS');
      assert.match(r.content, /'timeoutMs' must be an integer from 1 to 600000/);
    });
  });
});
