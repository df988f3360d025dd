import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { shownPath } from '../../src/extension/presenter/project-view';
import { until } from '../support/harness';
import { panelPerTest } from '../support/panel';

describe('extension: the project files in the panel, and starting a conversation with an agent', () => {
  const w = panelPerTest({ panel: false });
  const put = (rel: string, text: string) => {
    const p = path.join(w.t.workspace, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  };

  it('sends the files in effect after the snapshot: instructions, agents, and a bad file with its line', async () => {
    put('AGENTS.md', 'Be careful.');
    put('.arbor/agents/reviewer.md', '---\nname: reviewer\ndescription: Reviews diffs.\ntools: Read\nsandbox: read-only\n---\nYou review.\n');
    put('.claude/agents/broken.md', '---\nname: broken\ndescription: x\ntools: [Read\n---\n');
    w.t.h.project.refresh();
    const port = await w.view('panel');
    const [msg] = port.of('project/files');
    assert.ok(msg, 'sent on ready');
    assert.deepEqual(
      msg.files.instructions.map((f) => [f.path, f.level]),
      [['AGENTS.md', 'workspace']],
    );
    assert.deepEqual(msg.files.agents, [
      { name: 'reviewer', description: 'Reviews diffs.', path: '.arbor/agents/reviewer.md', tools: ['read_file'], sandbox: 'read-only' },
    ]);
    assert.deepEqual(msg.files.errors, [{ path: '.claude/agents/broken.md', line: 4, message: 'an inline list must end with "]" on the same line' }]);

    // An edit reaches every view (the host's watcher calls projectChanged; a request would too).
    put('.arbor/agents/tester.md', '---\nname: tester\ndescription: Writes tests.\n---\nYou test.\n');
    await w.c.projectChanged();
    await until(() => port.of('project/files').length === 2);
    assert.deepEqual(
      port.of('project/files')[1].files.agents.map((a) => a.name),
      ['reviewer', 'tester'],
    );
  });

  it('agent/start creates a conversation with the agent, selects it, and its first turn runs as that agent', async () => {
    put('.arbor/agents/reviewer.md', '---\nname: reviewer\ndescription: Reviews diffs.\ntools: Read, Grep\n---\nYou are REVIEWER-9.\n');
    const port = await w.view('panel');
    await w.c.receive(port, { type: 'agent/start', id: 'a1', agent: 'reviewer' });
    const id = port.sessionOf('a1');
    assert.ok(port.of('session/selected').some((m) => m.sessionId === id));
    await until(() => port.node(id)?.title === 'reviewer');
    w.server.enqueue({ text: 'Reviewing.' });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', sessionId: id, text: 'look at the diff' });
    await w.t.h.settle();
    const body = w.server.requests.at(-1)!.body;
    assert.match(String(body.messages[0].content), /You are REVIEWER-9\./);
    assert.deepEqual(
      (body.tools as { function: { name: string } }[]).map((t) => t.function.name),
      ['read_file', 'search_files'],
    );

    await w.c.receive(port, { type: 'agent/start', id: 'a2', agent: 'nobody' });
    const bad = port.of('request/done').find((m) => m.id === 'a2');
    assert.ok(bad && !bad.ok && bad.code === 'UNKNOWN_AGENT' && /agents defined in files: reviewer/.test(bad.error), JSON.stringify(bad));
    await w.c.receive(port, { type: 'agent/start', id: 'a3', agent: '../etc' });
    assert.equal(port.of('message/rejected').length, 1, 'a name that is no agent name is refused at the boundary');
  });

  it('shows paths workspace-relative, under the home folder as ~/…, else whole', () => {
    assert.equal(shownPath('/w/ws/pkg/AGENTS.md', '/w/ws', '/home/u'), 'pkg/AGENTS.md');
    assert.equal(shownPath('/home/u/.arbor/AGENTS.md', '/w/ws', '/home/u'), '~/.arbor/AGENTS.md');
    assert.equal(shownPath('/etc/AGENTS.md', '/w/ws', '/home/u'), '/etc/AGENTS.md');
  });
});
