import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_CATALOGUE_BYTES, readAgentCatalogue } from '../../../src/core/project/agent-catalogue';
import { isAgentFileError, parseAgentFile } from '../../../src/core/project/agent-file';
import { AGENTS_SECTION, catalogueText, ProjectFiles } from '../../../src/core/project/project-files';
import type { PromptSection } from '../../../src/core/scope/prompt';
import { ScopeRegistry } from '../../../src/core/scope/registry';
import { arborToolNames, CLAUDE_TOOL_ALIASES } from '../../../src/core/tools/aliases';
import { swapPaths, whileSwapping } from '../../support/swapper';

const REVIEWER = `---
name: reviewer
description: Reviews a diff for bugs.
tools: Read, Grep, Glob, Bash
model: inherit
---
You review code. Be terse.
`;

describe('agents defined in files: frontmatter, Claude Code tool names, errors with file and line', () => {
  it('parses name, description, tools (Claude Code names mapped), model, sandbox; the body is the persona', () => {
    const def = parseAgentFile('/x/reviewer.md', REVIEWER, 'claude');
    assert.ok(!isAgentFileError(def));
    assert.equal(def.name, 'reviewer');
    assert.equal(def.description, 'Reviews a diff for bugs.');
    assert.deepEqual(def.tools, ['read_file', 'search_files', 'list_files', 'run_command']);
    assert.equal(def.model, undefined, "'inherit' (and Claude's sonnet/opus/haiku) mean the caller's model");
    assert.equal(def.persona, 'You review code. Be terse.');

    const list = parseAgentFile(
      '/x/w.md',
      '---\nname: writer\ndescription: "Writes: docs" # a comment\ntools:\n  - read_file\n  - Write\nmodel: small-model\nsandbox: read-only\n---\nbody',
      'workspace',
    );
    assert.ok(!isAgentFileError(list));
    assert.deepEqual([list.description, list.tools, list.model, list.sandbox], ['Writes: docs', ['read_file', 'write_file'], 'small-model', 'read-only']);
  });

  it('one alias table: every Claude Code name maps to Arbor tools; other names pass through', () => {
    assert.deepEqual(arborToolNames('Bash'), ['run_command']);
    assert.deepEqual(arborToolNames('Task'), ['subagent']);
    assert.deepEqual(arborToolNames('mcp__db__query'), ['mcp__db__query']);
    assert.deepEqual(arborToolNames('toString'), ['toString'], 'no prototype name is an alias');
    for (const targets of Object.values(CLAUDE_TOOL_ALIASES)) assert.ok(targets.length > 0);
  });

  const bad: [string, string, number, RegExp][] = [
    ['no frontmatter', 'just text', 1, /must start with a "---" line/],
    ['unclosed', '---\nname: a\ndescription: b\n', 1, /never closed/],
    [
      'bad sandbox',
      '---\nname: a\ndescription: b\n\nsandbox: everything\n---\n',
      5,
      /sandbox "everything" must be one of read-only, workspace-write, full-access/,
    ],
    ['unknown key', '---\nname: a\ndescription: b\ncolour: red\n---\n', 4, /unknown key "colour"/],
    ['bad isolation', '---\nname: a\ndescription: b\nisolation: sideways\n---\n', 4, /isolation "sideways" must be worktree/],
    ['bad name', '---\nname: Big Name\ndescription: b\n---\n', 2, /lower-case/],
    ['missing description', '---\nname: a\n---\n', 1, /missing "description"/],
    ['twice', '---\nname: a\nname: b\ndescription: c\n---\n', 3, /set twice \(first on line 2\)/],
    ['unreadable line', '---\nname: a\ndescription: b\n  indented: x\n---\n', 4, /expected "key: value"/],
    ['bad quote', '---\nname: a\ndescription: "open\n---\n', 3, /unterminated double-quoted/],
    ['list as name', '---\nname: [a, b]\ndescription: c\n---\n', 2, /must be one value/],
  ];
  it('isolation: worktree is read (decision 0060)', () => {
    const r = parseAgentFile('/w/.arbor/agents/a.md', '---\nname: a\ndescription: b\nisolation: worktree\n---\nbody\n', 'workspace');
    assert.ok(!isAgentFileError(r));
    assert.equal(r.isolation, 'worktree');
  });
  for (const [what, text, line, message] of bad) {
    it(`a bad file (${what}) is an error naming the file and line ${line}`, () => {
      const r = parseAgentFile('/w/.arbor/agents/a.md', text, 'workspace');
      assert.ok(isAgentFileError(r), JSON.stringify(r));
      assert.equal(r.file, '/w/.arbor/agents/a.md');
      assert.equal(r.line, line);
      assert.match(r.message, message);
    });
  }

  describe('the catalogue: three folders, first definition wins, bad files never break the others, stable order', () => {
    let dir: string;
    const put = (rel: string, text: string) => {
      const p = path.join(dir, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, text);
    };
    const agent = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\nYou are ${name}.\n`;
    beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-agents-'))));
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('loads .arbor/agents, .claude/agents and the user folder; reports bad and duplicate files by file and line', () => {
      put('ws/.arbor/agents/zeta.md', agent('zeta', 'Last by name.'));
      put('ws/.arbor/agents/broken.md', '---\nname: broken\ndescription: x\nsandbox: root\n---\n');
      put('ws/.claude/agents/reviewer.md', REVIEWER);
      put('ws/.claude/agents/zeta-again.md', agent('zeta', 'A second zeta.'));
      put('ws/.claude/agents/notes.txt', 'not an agent file');
      put('home/agents/alpha.md', agent('alpha', 'First by name.'));
      const c = readAgentCatalogue({ root: path.join(dir, 'ws'), userDir: path.join(dir, 'home', 'agents') });
      assert.deepEqual(
        c.agents.map((a) => [a.name, a.origin]),
        [
          ['alpha', 'user'],
          ['reviewer', 'claude'],
          ['zeta', 'workspace'],
        ],
      );
      assert.equal(c.agents[2].description, 'Last by name.', '.arbor/agents wins over .claude/agents');
      assert.deepEqual(
        c.errors.map((e) => [path.relative(dir, e.file), e.line]),
        [
          ['ws/.arbor/agents/broken.md', 4],
          ['ws/.claude/agents/zeta-again.md', 1],
        ],
      );
      assert.match(c.errors[1].message, /already defined in .*zeta\.md; this file is ignored/);
    });

    it('attack: a workspace agent file (or agents folder) that links outside the workspace is not read; the user folder may link', () => {
      // A file outside the workspace that parses as an agent (another project's, the user's Claude Code agents).
      put('outside/private.md', agent('private', 'SECRET-DESCRIPTION-42'));
      put('outside/dir/other.md', agent('other', 'SECRET-DIR-43'));
      put('ws/.arbor/agents/ok.md', agent('ok', 'Inside.'));
      fs.symlinkSync(path.join(dir, 'outside', 'private.md'), path.join(dir, 'ws', '.arbor', 'agents', 'leak.md'));
      fs.mkdirSync(path.join(dir, 'ws', '.claude'), { recursive: true });
      fs.symlinkSync(path.join(dir, 'outside', 'dir'), path.join(dir, 'ws', '.claude', 'agents'));
      fs.mkdirSync(path.join(dir, 'home'), { recursive: true });
      fs.symlinkSync(path.join(dir, 'outside', 'private.md'), path.join(dir, 'home', 'mine.md'));
      const c = readAgentCatalogue({ root: path.join(dir, 'ws'), userDir: path.join(dir, 'home') });
      assert.deepEqual(
        c.agents.map((a) => [a.name, a.origin]),
        [
          ['ok', 'workspace'],
          ['private', 'user'],
        ],
      );
      assert.deepEqual(c.errors.map((e) => [path.relative(dir, e.file), e.line]).sort(), [
        ['ws/.arbor/agents/leak.md', 1],
        ['ws/.claude/agents/other.md', 1],
      ]);
      for (const e of c.errors) assert.match(e.message, /links outside the workspace/);
      const prompts = new ScopeRegistry<PromptSection>();
      const p = new ProjectFiles({ root: path.join(dir, 'ws') }, prompts);
      const text = prompts.view().find((s) => s.name === AGENTS_SECTION)?.text ?? '';
      p.dispose();
      assert.ok(!text.includes('SECRET-'), text);
    });

    it('attack: an agent file swapped for a link outside between the look and the read is never read', async () => {
      // As for AGENTS.md: the look found the file inside, a command exchanged it with a link to
      // another project's agent, and the read that followed parsed that one (session 50).
      put('outside/private.md', agent('private', 'SECRET-DESCRIPTION-44'));
      put('ws/.arbor/agents/ok.md', agent('ok', 'Inside.'));
      fs.symlinkSync(path.join(dir, 'outside', 'private.md'), path.join(dir, 'ws', '.arbor', 'agents', 'alt'));
      const s = swapPaths(path.join(dir, 'ws', '.arbor', 'agents', 'ok.md'), path.join(dir, 'ws', '.arbor', 'agents', 'alt'), 3000);
      let read = 0;
      let seen = 0;
      let leaked = '';
      await whileSwapping(s, () => {
        const c = readAgentCatalogue({ root: path.join(dir, 'ws') });
        for (const a of c.agents) if (a.description.includes('SECRET') || a.persona.includes('private')) leaked = JSON.stringify(a);
        if (c.agents.some((a) => a.name === 'ok')) read++;
        if (c.errors.length) seen++;
      });
      const swaps = await s.swaps;
      assert.ok(swaps > 10 && seen > 0, `the swapper ran (${swaps} swaps) and the link was seen (${seen} times)`);
      assert.equal(leaked, '', 'the agent outside was never read');
      assert.ok(read > 0, 'the agent inside was read');
    });

    it("attack: the catalogue in every prompt is capped; agents past the cap are errors, the user's own are kept first", () => {
      // A repository that ships many agents with long descriptions (each file under the 64 KiB file cap).
      for (let i = 0; i < 12; i++) put(`ws/.arbor/agents/a${i}.md`, agent(`a${i}`, 'x'.repeat(8000)));
      put('home/mine.md', agent('zz-mine', 'My own agent.'));
      const c = readAgentCatalogue({ root: path.join(dir, 'ws'), userDir: path.join(dir, 'home') });
      const prompts = new ScopeRegistry<PromptSection>();
      const p = new ProjectFiles({ root: path.join(dir, 'ws'), userAgents: path.join(dir, 'home') }, prompts);
      const text = prompts.view().find((s) => s.name === AGENTS_SECTION)?.text ?? '';
      p.dispose();
      assert.ok(Buffer.byteLength(text) <= MAX_CATALOGUE_BYTES + 1024, `the section is ${Buffer.byteLength(text)} bytes`);
      assert.ok(
        c.agents.some((a) => a.name === 'zz-mine'),
        "the user's own agent is kept",
      );
      assert.ok(text.includes('- zz-mine: My own agent.'));
      const cut = c.errors.filter((e) => /catalogue of agents is capped/.test(e.message));
      assert.ok(cut.length > 0 && cut.length + c.agents.length === 13, `${cut.length} cut, ${c.agents.length} kept`);
      for (const a of c.agents) assert.ok(text.includes(`- ${a.name}: `), `${a.name} kept and listed`);
    });

    it('the catalogue section is the same bytes whatever order the files were written in, and changes only with the files', () => {
      const sectionFor = (order: string[]) => {
        fs.rmSync(path.join(dir, 'ws'), { recursive: true, force: true });
        for (const n of order) put(`ws/.arbor/agents/${n}.md`, agent(n, `Does ${n}.`));
        const prompts = new ScopeRegistry<PromptSection>();
        const p = new ProjectFiles({ root: path.join(dir, 'ws') }, prompts);
        const text = prompts.view().find((s) => s.name === AGENTS_SECTION)?.text;
        p.dispose();
        return text;
      };
      const a = sectionFor(['b', 'c', 'a']);
      const b = sectionFor(['c', 'a', 'b']);
      assert.equal(a, b);
      const text = a ?? '';
      assert.ok(text.indexOf('- a: Does a.') > 0 && text.indexOf('- a: Does a.') < text.indexOf('- b: Does b.'), text);
      assert.equal(catalogueText([]), '', 'no agents: no section');
    });
  });
});
