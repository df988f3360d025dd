// Decision 0056 in the built webview (headless chromium, scripted host): the Project section
// lists the instruction files in effect, the agents (Start posts agent/start) and the files that
// are not agents with file:line; nothing is drawn for a project with none; it fits 300 px.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ProjectFilesView } from '../../src/protocol';
import { webviewFixture } from '../support/webview-fixture';

const SETTINGS = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'deepseek-chat' } as const;
const FILES: ProjectFilesView = {
  instructions: [
    { path: '~/.arbor/AGENTS.md', level: 'user', bytes: 120, included: 120 },
    { path: 'AGENTS.md', level: 'workspace', bytes: 2048, included: 2048 },
  ],
  skipped: [],
  cutBytes: 0,
  maxBytes: 32768,
  agents: [
    {
      name: 'reviewer',
      description: 'Reviews a diff for bugs and missing tests; answers with a list.',
      path: '.arbor/agents/reviewer.md',
      tools: ['read_file', 'search_files'],
    },
    { name: 'tester', description: 'Writes and runs the tests.', path: '.claude/agents/tester.md', sandbox: 'workspace-write' },
  ],
  errors: [{ path: '.arbor/agents/broken.md', line: 4, message: 'sandbox "root" must be one of read-only, workspace-write, full-access' }],
};

describe('webview: the project files section (decision 0056)', () => {
  const w = webviewFixture('arbor-webview-project-');
  const { send, posted, count, click, textOf } = w;
  const snapshot = { type: 'state/snapshot' as const, nodes: [], settings: { ...SETTINGS }, approvals: [] };
  const artifacts = path.join(__dirname, '..', '..', '..', 'test-artifacts', 'webview-layout');
  before(() => fs.mkdirSync(artifacts, { recursive: true }));

  it('draws nothing for a project without instruction or agent files', async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 300, height: 700 } });
    await send(snapshot, { type: 'project/files', files: { ...FILES, instructions: [], agents: [], errors: [] } });
    assert.equal(await count('.project'), 0);
  });

  it('lists files and agents, shows a bad file with its line, and Start posts agent/start; it fits 300 px', async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 300, height: 700 } });
    await send(snapshot, { type: 'project/files', files: FILES });
    assert.match(await textOf('.project .head'), /2 instruction files · 2 agents\s*· 1 problem/);
    await click('.project .head');
    await w.waitFor(`!!document.querySelector('.project .agents')`, 'the section opens');
    assert.deepEqual(await w.page.evaluate<string[]>(`[...document.querySelectorAll('.project .files li')].map((l) => l.textContent.trim())`), [
      '~/.arbor/AGENTS.md',
      'AGENTS.md',
    ]);
    assert.equal(await textOf('.project .error'), '.arbor/agents/broken.md:4: sandbox "root" must be one of read-only, workspace-write, full-access');
    const wide = await w.page.evaluate<string[]>(`(() => {
      const out = [];
      for (const el of document.querySelectorAll('.project, .project .start, .project .agent')) {
        if (el.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5) out.push(el.className);
      }
      return out;
    })()`);
    assert.deepEqual(wide, [], 'nothing leaves the panel');
    await w.page.screenshot({ path: path.join(artifacts, 'project-files-300px.png') });
    await click('.project .agents li:nth-child(2) .start');
    const last = (await posted()).at(-1) as { type: string; agent?: string };
    assert.deepEqual([last.type, last.agent], ['agent/start', 'tester']);
  });

  it('in Restricted Mode the Start buttons are disabled', async () => {
    await w.open({ view: 'panel' }, { viewport: { width: 300, height: 700 } });
    await send({ ...snapshot, settings: { ...SETTINGS, restricted: true } }, { type: 'project/files', files: FILES });
    await click('.project .head');
    await w.waitFor(`!!document.querySelector('.project .start')`, 'the section opens');
    assert.equal(await count('.project .start:disabled'), 2);
  });
});
