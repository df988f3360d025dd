// Escape attempts an injected agent might make with the file tools, table-driven. Each
// runs on the real file system under workspace-write and checks two things: the call
// is refused, and nothing appeared or changed outside the workspace (or, for protected
// paths, inside the protected location).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ApprovalPolicy } from '../../../src/core/session/events';
import { createEditFileTool } from '../../../src/core/tools/edit-file';
import type { ToolResult } from '../../../src/core/tools/tool';
import { createWriteFileTool } from '../../../src/core/tools/write-file';
import { scriptedApproval } from '../../support/scripted-approval';
import { call, makeWorkspace, snapshot, type Workspace } from './fixture';

interface Attack {
  name: string;
  /** Plant links and files; returns the path the model sends. */
  setup: (ws: Workspace) => string;
  tool?: 'write_file' | 'edit_file';
}

const write = createWriteFileTool();
const edit = createEditFileTool();

function attempt(ws: Workspace, a: Attack, p: string, ctx = ws.ctx()): Promise<ToolResult> {
  return a.tool === 'edit_file' ? call(edit, { path: p, oldText: 'ORIGINAL', newText: 'PWNED' }, ctx) : call(write, { path: p, content: 'PWNED' }, ctx);
}

const ESCAPES: Attack[] = [
  { name: '../ to a sibling of the root', setup: () => '../outside.txt' },
  { name: 'climbing out through an existing subdirectory', setup: (ws) => (fs.mkdirSync(ws.at('a')), 'a/../../outside.txt') },
  { name: 'climbing out through a missing subdirectory', setup: () => 'nope/../../outside/x.txt' },
  { name: './ and // variants of ../', setup: () => './/..//outside/dots.txt' },
  { name: 'absolute path outside', setup: (ws) => path.join(ws.outside, 'abs.txt') },
  { name: 'absolute path that starts inside and climbs out', setup: (ws) => `${ws.root}/../outside/abs2.txt` },
  { name: 'absolute /etc/passwd', setup: () => '/etc/passwd' },
  { name: 'symlinked directory pointing outside', setup: (ws) => (fs.symlinkSync(ws.outside, ws.at('linkdir')), 'linkdir/new.txt') },
  {
    name: 'symlink to an outside file (overwrite)',
    setup: (ws) => (fs.symlinkSync(path.join(ws.outside, 'victim.txt'), ws.at('linkfile')), 'linkfile'),
  },
  {
    name: 'symlink to an outside file (edit)',
    tool: 'edit_file',
    setup: (ws) => (fs.symlinkSync(path.join(ws.outside, 'victim.txt'), ws.at('linkfile')), 'linkfile'),
  },
  {
    name: 'dangling symlink pointing outside (a create would make the outside file)',
    setup: (ws) => (fs.symlinkSync(path.join(ws.outside, 'created-by-dangle.txt'), ws.at('dangle')), 'dangle'),
  },
  {
    name: 'dangling symlink chain ending outside',
    setup: (ws) => {
      fs.symlinkSync('d2', ws.at('d1'));
      fs.symlinkSync(path.join(ws.outside, 'chained.txt'), ws.at('d2'));
      return 'd1';
    },
  },
  {
    name: 'symlinked parent deep in the path, with directories to create beyond it',
    setup: (ws) => (fs.mkdirSync(ws.at('sub')), fs.symlinkSync(ws.outside, ws.at('sub/deep')), 'sub/deep/x/y/z.txt'),
  },
  {
    name: 'symlink chain through the workspace to the outside',
    setup: (ws) => {
      fs.symlinkSync('l2', ws.at('l1'));
      fs.symlinkSync('l3', ws.at('l2'));
      fs.symlinkSync(ws.outside, ws.at('l3'));
      return 'l1/chain.txt';
    },
  },
  { name: 'relative symlink climbing out', setup: (ws) => (fs.symlinkSync('../outside', ws.at('rel')), 'rel/r.txt') },
  { name: 'symlink to the parent directory', setup: (ws) => (fs.symlinkSync('..', ws.at('up')), 'up/outside/up.txt') },
  { name: 'symlink to /', setup: (ws) => (fs.symlinkSync('/', ws.at('slash')), `slash${ws.outside}/slash.txt`) },
  {
    name: 'symlink then .. (lexically inside the root, physically outside)',
    setup: (ws) => {
      fs.mkdirSync(path.join(ws.outside, 'd'));
      fs.symlinkSync(path.join(ws.outside, 'd'), ws.at('s'));
      return 's/../lexical.txt';
    },
  },
  { name: 'NUL byte hiding a climb', setup: () => 'ok.txt\0../../outside.txt' },
  { name: 'trailing slash on an outside path', setup: () => '../outside/trailing/' },
];

/** Protected paths: refused unless the approval port allows. `created` is where an allowed write lands. */
interface Protected extends Attack {
  created: (ws: Workspace) => string;
}

const PROTECTED: Protected[] = [
  { name: '.vscode/settings.json', setup: () => '.vscode/settings.json', created: (ws) => ws.at('.vscode/settings.json') },
  { name: '.VSCode/Settings.json (case variant)', setup: () => '.VSCode/Settings.json', created: (ws) => ws.at('.VSCode/Settings.json') },
  { name: '.git/config', setup: () => '.git/config', created: (ws) => ws.at('.git/config') },
  { name: '.GIT/hooks/pre-commit (case variant)', setup: () => '.GIT/hooks/pre-commit', created: (ws) => ws.at('.GIT/hooks/pre-commit') },
  { name: '.arbor/settings.json', setup: () => '.arbor/settings.json', created: (ws) => ws.at('.arbor/settings.json') },
  { name: 'x.code-workspace', setup: () => 'x.code-workspace', created: (ws) => ws.at('x.code-workspace') },
  { name: '.mcp.json', setup: () => '.mcp.json', created: (ws) => ws.at('.mcp.json') },
  { name: 'pkg/.MCP.json (nested, case variant)', setup: (ws) => (fs.mkdirSync(ws.at('pkg')), 'pkg/.MCP.json'), created: (ws) => ws.at('pkg/.MCP.json') },
  { name: '.gemini/settings.json (Gemini CLI, decision 0115)', setup: () => '.gemini/settings.json', created: (ws) => ws.at('.gemini/settings.json') },
  { name: 'opencode.json (OpenCode)', setup: () => 'opencode.json', created: (ws) => ws.at('opencode.json') },
  {
    name: 'pkg/OpenCode.JSONC (nested, case variant)',
    setup: (ws) => (fs.mkdirSync(ws.at('pkg')), 'pkg/OpenCode.JSONC'),
    created: (ws) => ws.at('pkg/OpenCode.JSONC'),
  },
  { name: '.opencode/plugin/x.js (an OpenCode plugin)', setup: () => '.opencode/plugin/x.js', created: (ws) => ws.at('.opencode/plugin/x.js') },
  { name: 'sub/../.vscode/tasks.json', setup: (ws) => (fs.mkdirSync(ws.at('sub')), 'sub/../.vscode/tasks.json'), created: (ws) => ws.at('.vscode/tasks.json') },
  { name: './.vscode//./settings.json', setup: () => './.vscode//./settings.json', created: (ws) => ws.at('.vscode/settings.json') },
  { name: 'absolute path to .git/config', setup: (ws) => ws.at('.git/config'), created: (ws) => ws.at('.git/config') },
  {
    name: 'nested repository sub/.git/hooks/post-checkout',
    setup: () => 'sub/.git/hooks/post-checkout',
    created: (ws) => ws.at('sub/.git/hooks/post-checkout'),
  },
  {
    name: 'a symlink into .vscode',
    setup: (ws) => (fs.symlinkSync('.vscode', ws.at('cfg')), 'cfg/settings.json'),
    created: (ws) => ws.at('.vscode/settings.json'),
  },
  {
    name: 'the real directory behind a symlinked .vscode',
    setup: (ws) => {
      fs.rmSync(ws.at('.vscode'), { recursive: true });
      fs.mkdirSync(ws.at('editor'));
      fs.symlinkSync('editor', ws.at('.vscode'));
      return 'editor/settings.json';
    },
    created: (ws) => ws.at('editor/settings.json'),
  },
  {
    name: 'edit of the existing .vscode/settings.json',
    tool: 'edit_file',
    setup: () => '.vscode/settings.json',
    created: (ws) => ws.at('.vscode/settings.json'),
  },
];

describe('attack corpus: escapes from the workspace under workspace-write', () => {
  let ws: Workspace;
  let passwd: Buffer;
  before(() => {
    passwd = fs.readFileSync('/etc/passwd');
  });
  beforeEach(() => {
    ws = makeWorkspace();
    fs.writeFileSync(path.join(ws.outside, 'victim.txt'), 'ORIGINAL');
  });
  afterEach(() => ws.cleanup());
  after(() => assert.deepEqual(fs.readFileSync('/etc/passwd'), passwd, '/etc/passwd is untouched'));

  it(`has at least 15 escape attempts (${ESCAPES.length}) and 10 protected paths (${PROTECTED.length})`, () => {
    assert.ok(ESCAPES.length >= 15);
    assert.ok(PROTECTED.length >= 10);
  });

  for (const a of ESCAPES) {
    it(`refuses ${a.tool ?? 'write_file'}: ${a.name}`, async () => {
      const p = a.setup(ws);
      const before = snapshot(ws.base, [ws.root]);
      // A port that allows everything: approval cannot authorise a write outside the workspace.
      const port = scriptedApproval([], 'allow');
      const result = await attempt(ws, a, p, ws.ctx({ approvalPolicy: 'ask', approval: port }));
      assert.equal(result.isError, true, `expected a refusal, got: ${result.content}`);
      assert.ok(['OUTSIDE_WORKSPACE', 'INVALID_PATH', 'NOT_A_FILE'].includes(result.code ?? ''), `${result.code}: ${result.content}`);
      assert.match(result.content, /^(write_file|edit_file): /);
      assert.equal(port.requests.length, 0, 'no approval is asked for an escape');
      assert.deepEqual(snapshot(ws.base, [ws.root]), before, 'nothing appeared or changed outside the root');
      assert.equal(fs.readFileSync(path.join(ws.outside, 'victim.txt'), 'utf8'), 'ORIGINAL');
      assert.ok(!fs.existsSync(path.join(ws.base, 'outside.txt')));
    });
  }
});

describe('attack corpus: protected paths inside the workspace', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
    ws.write('.vscode/settings.json', 'ORIGINAL');
    ws.write('.git/config', 'ORIGINAL');
  });
  afterEach(() => ws.cleanup());

  const refusals: { label: string; policy: ApprovalPolicy; port: 'deny' | 'none' | 'allow-ignored' }[] = [
    { label: 'the user denies', policy: 'ask', port: 'deny' },
    { label: 'policy is never (the port is not asked)', policy: 'never', port: 'allow-ignored' },
    { label: 'there is no approval port', policy: 'ask', port: 'none' },
  ];

  for (const a of PROTECTED) {
    for (const r of refusals) {
      it(`refuses ${a.tool ?? 'write_file'} ${a.name} when ${r.label}`, async () => {
        const p = a.setup(ws);
        const before = snapshot(ws.base);
        const port = r.port === 'deny' ? scriptedApproval([], 'deny') : r.port === 'allow-ignored' ? scriptedApproval([], 'allow') : undefined;
        const result = await attempt(ws, a, p, ws.ctx({ approvalPolicy: r.policy, approval: port }));
        assert.equal(result.isError, true, `expected a refusal, got: ${result.content}`);
        assert.equal(result.code, 'APPROVAL_DENIED', result.content);
        assert.match(result.content, /protected path/);
        assert.match(result.content, /approval was refused/);
        assert.equal(port?.requests.length ?? 0, r.port === 'deny' ? 1 : 0);
        assert.deepEqual(snapshot(ws.base), before, 'nothing was written anywhere');
      });
    }

    it(`allows ${a.tool ?? 'write_file'} ${a.name} when the approval port allows`, async () => {
      const p = a.setup(ws);
      const outsideBefore = snapshot(ws.outside);
      const port = scriptedApproval(['allow']);
      const result = await attempt(ws, a, p, ws.ctx({ approvalPolicy: 'ask', approval: port }));
      assert.equal(result.isError, false, result.content);
      assert.equal(port.requests.length, 1);
      assert.equal(port.requests[0].sessionId, 'S1');
      assert.equal(port.requests[0].tool, a.tool ?? 'write_file');
      assert.match(port.requests[0].reason, /protected path/);
      assert.match(
        port.requests[0].summary,
        a.tool === 'edit_file' ? /^edit_file: replace 1 occurrence in \S+$/ : /^write_file: (create|overwrite) \S+ \(5 bytes\)$/,
      );
      assert.equal(fs.readFileSync(a.created(ws), 'utf8'), 'PWNED');
      assert.deepEqual(snapshot(ws.outside), outsideBefore);
    });
  }
});
