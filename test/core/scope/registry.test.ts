import assert from 'node:assert/strict';
import { assemblePrompt, PERSONA_SECTION, type PromptSection } from '../../../src/core/scope/prompt';
import { GLOBAL, ScopeRegistry } from '../../../src/core/scope/registry';

interface Item {
  name: string;
  from: string;
}
const item = (name: string, from: string): Item => ({ name, from });
const view = (r: ScopeRegistry<Item>, spec: Parameters<ScopeRegistry<Item>['view']>[0]) => r.view(spec).map((i) => `${i.name}@${i.from}`);

describe('scope: flat registry with global → preset → own', () => {
  let r: ScopeRegistry<Item>;
  beforeEach(() => {
    r = new ScopeRegistry<Item>();
    r.register(item('read_file', 'global'));
    r.register(item('write_file', 'global'));
    r.register(item('run_command', 'global'));
    r.register(item('read_file', 'preset'), 'preset:coder');
    r.register(item('lint', 'preset'), 'preset:coder');
    r.register(item('report', 'own'), 'agent:c1');
    r.register(item('write_file', 'own'), 'agent:c1');
  });

  it('shadows by name, nearer wins, and sorts by name for stable requests', () => {
    assert.deepEqual(view(r, {}), ['read_file@global', 'run_command@global', 'write_file@global']);
    assert.deepEqual(view(r, { preset: 'preset:coder' }), ['lint@preset', 'read_file@preset', 'run_command@global', 'write_file@global']);
    assert.deepEqual(view(r, { preset: 'preset:coder', own: 'agent:c1' }), [
      'lint@preset',
      'read_file@preset',
      'report@own',
      'run_command@global',
      'write_file@own',
    ]);
  });

  it('filters restrict inherited entries only, and several filters intersect', () => {
    assert.deepEqual(
      view(r, {
        preset: 'preset:coder',
        own: 'agent:c1',
        filters: [
          ['read_file', 'lint', 'run_command'],
          ['read_file', 'run_command'],
        ],
      }),
      ['read_file@preset', 'report@own', 'run_command@global', 'write_file@own'],
    );
    // The child's own tools survive a filter that does not name them.
    assert.ok(view(r, { own: 'agent:c1', filters: [[]] }).includes('report@own'));
    assert.deepEqual(view(r, { filters: [[]] }), []);
  });

  it("a child joins the preset standing scope, never another agent's own scope", () => {
    r.register(item('secret', 'parent-own'), 'agent:parent');
    assert.ok(!view(r, { preset: 'preset:coder', own: 'agent:c1' }).some((x) => x.startsWith('secret')));
  });

  it('unregister and dropScope remove entries; global cannot be dropped by dropScope', () => {
    const off = r.register(item('tmp', 'global'));
    assert.ok(view(r, {}).includes('tmp@global'));
    off();
    assert.ok(!view(r, {}).includes('tmp@global'));
    r.dropScope('agent:c1');
    assert.deepEqual(view(r, { own: 'agent:c1' }), ['read_file@global', 'run_command@global', 'write_file@global']);
    r.dropScope(GLOBAL);
    assert.equal(view(r, {}).length, 3);
  });
});

describe('scope: prompt sections and persona', () => {
  const sections = () => {
    const r = new ScopeRegistry<PromptSection>();
    r.register({ name: PERSONA_SECTION, order: 0, text: 'You are the deployment persona.' });
    r.register({ name: 'deployment:rules', order: 10, text: 'Rule A.' });
    r.register({ name: 'deployment:rules', order: 10, text: 'Rule A for coders.' }, 'preset:coder');
    r.register({ name: 'child:extra', order: 20, text: 'Child-only note.' }, 'agent:c1');
    return r;
  };

  it('assembles in order with the same shadowing as tools, byte-stable', () => {
    const r = sections();
    const a = assemblePrompt(r, { preset: 'preset:coder', own: 'agent:c1' });
    assert.equal(a, 'You are the deployment persona.\n\nRule A for coders.\n\nChild-only note.');
    assert.equal(assemblePrompt(r, { preset: 'preset:coder', own: 'agent:c1' }), a);
  });

  it('a persona shadows deployment:persona; complete: true makes it the whole prompt', () => {
    const r = sections();
    assert.equal(assemblePrompt(r, {}, { text: 'You review code.' }), 'You review code.\n\nRule A.');
    assert.equal(assemblePrompt(r, {}, { text: 'Only this.', complete: true }), 'Only this.');
  });
});
