import assert from 'node:assert/strict';
import { matchesAny, toolNames } from '../../../src/core/hooks/matcher';
import { parseHooksSettings } from '../../../src/core/hooks/schema';
import { CLAUDE_TOOL_ALIASES, claudeCodeNamesOf } from '../../../src/core/tools/aliases';

describe("hooks: Claude Code's matchers over Arbor's tool names (decision 0057)", () => {
  it('a tool matches under its Arbor name and every Claude Code name for it', () => {
    assert.deepEqual(toolNames('run_command'), ['run_command', 'Bash']);
    assert.deepEqual(toolNames('edit_file'), ['edit_file', 'Edit', 'MultiEdit']);
    assert.deepEqual(toolNames('list_files'), ['list_files', 'Glob', 'LS']);
    assert.deepEqual(toolNames('subagent'), ['subagent', 'Task']);
    assert.deepEqual(toolNames('mcp__db__query'), ['mcp__db__query']);
    for (const [claude, arbor] of Object.entries(CLAUDE_TOOL_ALIASES)) for (const a of arbor) assert.ok(claudeCodeNamesOf(a).includes(claude));
  });

  it("'' and '*' match everything; plain names and a|b lists match exactly; anything else is a regex", () => {
    const bash = toolNames('run_command');
    assert.ok(matchesAny('', bash));
    assert.ok(matchesAny('*', bash));
    assert.ok(matchesAny('Bash', bash));
    assert.ok(matchesAny('run_command', bash));
    assert.ok(matchesAny('Write|Bash', bash));
    assert.ok(!matchesAny('Bas', bash), 'a plain name is exact, not a prefix');
    assert.ok(!matchesAny('bash', bash), 'case-sensitive');
    assert.ok(matchesAny('B.sh', bash));
    assert.ok(matchesAny('^run_', bash));
    assert.ok(matchesAny('mcp__.*', ['mcp__db__query']));
    assert.ok(!matchesAny('Write|Edit', bash));
    assert.ok(!matchesAny('(', bash), 'a bad regex matches nothing');
  });

  it('the schema: timeouts in seconds (capped at 600), only command hooks, unknown events named', () => {
    const text = JSON.stringify({
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash',
            hooks: [
              { type: 'command', command: 'a', timeout: 5 },
              { type: 'command', command: 'b', timeout: 9999 },
              { type: 'prompt', prompt: 'x' },
            ],
          },
        ],
        Stop: [{ hooks: [{ type: 'command', command: 'c' }] }],
        SessionStart: [{ hooks: [{ type: 'command', command: 'd' }] }],
      },
    });
    const p = parseHooksSettings(text, '/ws/.arbor/settings.json', 'workspace');
    assert.deepEqual(
      p.hooks.map((h) => [h.event, h.matcher, h.command, h.timeoutMs]),
      [
        ['PreToolUse', 'Bash', 'a', 5000],
        ['PreToolUse', 'Bash', 'b', 600_000],
        ['Stop', '', 'c', 60_000],
      ],
    );
    assert.equal(p.problems.length, 2);
    assert.match(p.problems[0], /hooks\.PreToolUse\[0\]\.hooks\[2\] must be \{"type": "command"/);
    assert.match(p.problems[1], /Arbor does not fire "SessionStart"/);
    assert.match(parseHooksSettings('{nope', '/x.json', 'user').problems[0], /^\/x\.json: not valid JSON/);
    assert.deepEqual(parseHooksSettings('{"model": "x"}', '/x.json', 'user'), { hooks: [], problems: [] });
  });
});
