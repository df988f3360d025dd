import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { arbor, cliWorld } from '../support/cli';

describe('cli: the user-level instructions and agents ($ARBOR_USER_DIR), arbor run --agent', () => {
  const w = cliWorld('arbor-cli-agents-');
  const put = (rel: string, text: string) => {
    const p = path.join(w.dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  };

  it('runs a conversation as a user-level agent, with the user AGENTS.md before the workspace one', async () => {
    put('user/AGENTS.md', 'USER-RULE: answer in one line.');
    put('user/agents/planner.md', '---\nname: planner\ndescription: Plans work.\ntools: Read, Glob\n---\nYou are PLANNER-CLI.\n');
    put('ws/AGENTS.md', 'WORKSPACE-RULE: run the tests.');
    w.server.enqueue({ text: 'A plan.' });
    const env = { ARBOR_USER_DIR: path.join(w.dir, 'user') };
    const r = await arbor(['run', ...w.common, '--agent', 'planner', 'plan the work'], env);
    assert.equal(r.code, 0, r.stderr);
    const body = w.server.requests[0].body;
    const system = String(body.messages[0].content);
    assert.ok(system.includes('You are PLANNER-CLI.'));
    assert.ok(system.indexOf('USER-RULE') > 0 && system.indexOf('USER-RULE') < system.indexOf('WORKSPACE-RULE'), 'the user file first, the workspace after');
    assert.deepEqual(
      (body.tools as { function: { name: string } }[]).map((t) => t.function.name),
      ['list_files', 'read_file'],
    );

    const ghost = await arbor(['run', ...w.common, '--agent', 'ghost', 'x'], env);
    assert.equal(ghost.code, 1);
    assert.match(ghost.stderr, /No agent named "ghost"; agents defined in files: planner\./);
    const bare = await arbor(['run', ...w.common, 'x', '--agent']);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /--agent needs a value/);
  });
});
