import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { claudeConfigDir, claudeInstructions } from '../../../src/core/remote/claude-instructions';

// What a confined Claude Code child is given in place of its own CLAUDE.md reading (decision 0122,
// amended in s58); the real programs are checked in test/remote/claude-settings-widen.test.ts and
// test/remote/acp-settings-widen.test.ts.

describe('remote: the instructions a confined Claude Code child is given', () => {
  let dir = '';
  let repo = '';
  let config = '';
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-claude-md-')));
    repo = path.join(dir, 'repo');
    config = path.join(dir, 'config');
    fs.mkdirSync(path.join(repo, '.git'), { recursive: true });
    fs.mkdirSync(path.join(repo, 'pkg', 'sub'), { recursive: true });
    fs.mkdirSync(config);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("the user's CLAUDE.md, then from the repository root down to the folder: each level's AGENTS.md and CLAUDE.md", () => {
    fs.writeFileSync(path.join(dir, 'AGENTS.md'), 'ABOVE-THE-REPO');
    fs.writeFileSync(path.join(config, 'CLAUDE.md'), 'USER');
    fs.writeFileSync(path.join(repo, 'AGENTS.md'), 'ROOT-AGENTS');
    fs.writeFileSync(path.join(repo, 'CLAUDE.md'), 'ROOT-CLAUDE');
    fs.writeFileSync(path.join(repo, 'pkg', 'CLAUDE.md'), 'PKG-CLAUDE');
    fs.writeFileSync(path.join(repo, 'pkg', 'sub', 'AGENTS.md'), 'SUB-AGENTS');
    const text = claudeInstructions('workspace-write', path.join(repo, 'pkg', 'sub'), config);
    const order = ['USER', 'ROOT-AGENTS', 'ROOT-CLAUDE', 'PKG-CLAUDE', 'SUB-AGENTS'].map((m) => text.indexOf(m));
    assert.ok(
      order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1])),
      text,
    );
    assert.match(text, /^# Project instructions/);
    assert.match(text, /## pkg\/sub\/AGENTS\.md/);
    assert.doesNotMatch(text, /ABOVE-THE-REPO/, 'nothing above the repository root');
  });

  it('full-access: nothing (Claude Code reads its own); no file: nothing', () => {
    fs.writeFileSync(path.join(repo, 'CLAUDE.md'), 'ROOT-CLAUDE');
    assert.equal(claudeInstructions('full-access', repo, config), '');
    fs.rmSync(path.join(repo, 'CLAUDE.md'));
    assert.equal(claudeInstructions('read-only', repo, config), '');
  });

  it('attack: a CLAUDE.md linking to a secret outside the repository is not given', () => {
    fs.writeFileSync(path.join(dir, 'secret'), 'SECRET-TEXT');
    fs.symlinkSync(path.join(dir, 'secret'), path.join(repo, 'CLAUDE.md'));
    fs.writeFileSync(path.join(repo, 'AGENTS.md'), 'ROOT-AGENTS');
    const text = claudeInstructions('read-only', repo, config);
    assert.match(text, /ROOT-AGENTS/);
    assert.doesNotMatch(text, /SECRET-TEXT/);
  });

  it('a folder in no repository: the folder alone', () => {
    const plain = path.join(dir, 'plain');
    fs.mkdirSync(plain);
    fs.writeFileSync(path.join(plain, 'CLAUDE.md'), 'PLAIN');
    assert.match(claudeInstructions('read-only', plain, config), /PLAIN/);
  });

  it("Claude Code's config folder: CLAUDE_CONFIG_DIR, else ~/.claude", () => {
    assert.equal(claudeConfigDir({ CLAUDE_CONFIG_DIR: '/c', HOME: '/h' }), '/c');
    assert.equal(claudeConfigDir({ HOME: '/h' }), '/h/.claude');
  });
});
