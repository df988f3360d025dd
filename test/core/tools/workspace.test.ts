import * as assert from 'node:assert/strict';
import { workspaceTools } from '../../../src/core/tools/workspace';
import { call, makeWorkspace, type Workspace } from './fixture';

describe('workspace tools', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
    ws.write('a.txt', 'a');
  });
  afterEach(() => ws.cleanup());

  it('are the six workspace tools, sorted by name', () => {
    assert.deepEqual(
      workspaceTools().map((t) => t.name),
      ['edit_file', 'list_files', 'read_file', 'run_command', 'search_files', 'write_file'],
    );
  });

  it('declare object schemas that forbid unknown arguments and describe every property', () => {
    for (const t of workspaceTools()) {
      assert.equal(t.parameters.type, 'object', t.name);
      assert.equal(t.parameters.additionalProperties, false, t.name);
      for (const [name, p] of Object.entries(t.parameters.properties ?? {})) assert.ok(p.description, `${t.name}.${name}`);
      assert.ok(t.description.length > 20, t.name);
    }
  });

  // Bad model arguments never throw: each is an error result naming the tool and the field.
  const bad: [string, string, RegExp][] = [
    ['read_file', '{"path": "a.txt"', /^read_file: the arguments are not valid JSON/],
    ['read_file', '{}', /^read_file: 'path' is required \(a string: the file path/],
    ['read_file', '{"path": ["a.txt"]}', /^read_file: 'path' must be a string.*got an array/],
    ['read_file', '{"path": "a.txt", "startLine": "1"}', /'startLine' must be an integer ≥ 1/],
    ['list_files', '{"recursive": "yes"}', /^list_files: 'recursive' must be a boolean.*got a string \("yes"\)/],
    ['list_files', '{"depth": 0}', /'depth' must be an integer from 1 to 20/],
    ['search_files', '{"path": "."}', /^search_files: 'pattern' is required/],
    ['search_files', '{"pattern": 5}', /'pattern' must be a string/],
    ['write_file', '{"path": "b.txt"}', /^write_file: 'content' is required/],
    ['write_file', '{"path": "b.txt", "content": {"text": "x"}}', /'content' must be a string.*got an object/],
    ['write_file', '[1, 2]', /must be a JSON object, got an array/],
    ['edit_file', '{"path": "a.txt", "old": "a", "new": "b"}', /'oldText' is required.*'newText' is required.*'old' is not an argument/],
    ['edit_file', '{"path": "a.txt", "oldText": "a", "newText": "b", "replaceAll": 1}', /'replaceAll' must be a boolean/],
    ['run_command', '{"cmd": "ls"}', /^run_command: 'command' is required.*'cmd' is not an argument/],
    ['run_command', '{"command": "ls", "timeoutMs": 1.5}', /'timeoutMs' must be an integer/],
    ['run_command', 'not json at all', /^run_command: the arguments are not valid JSON/],
  ];
  for (const [name, raw, re] of bad) {
    it(`${name} answers ${raw} with an error result`, async () => {
      const tool = workspaceTools().find((t) => t.name === name)!;
      const r = await call(tool, raw, ws.ctx());
      assert.equal(r.isError, true);
      assert.equal(r.code, 'INVALID_ARGUMENTS');
      assert.match(r.content, re);
    });
  }

  it('execute never throws, even when called directly with arguments that skipped the checker', async () => {
    for (const tool of workspaceTools()) {
      const args = { path: 42, cwd: 42, command: 42, pattern: 42, content: 42, oldText: 42, newText: 42 };
      const r = await tool.execute(args, ws.ctx({ sandbox: 'full-access' }));
      assert.equal(r.isError, true, `${tool.name}: ${r.content}`);
      assert.match(r.content, new RegExp(`^${tool.name}`));
    }
  });
});
