import assert from 'node:assert/strict';
import { readExamplePrompts } from '../../src/extension/example-prompts';
import { DEMO_PROMPT_LABELS, DEMO_PROMPTS } from '../support/demo-script';

describe('extension: the example prompts setting (arbor.chat.examplePrompts)', () => {
  it('reads prompts and goal buttons, leaves out what is malformed, keeps at most 8', () => {
    assert.deepEqual(
      readExamplePrompts([
        'survey the workspace',
        { prompt: 'tidy the workspace', goalRounds: 2 },
        { prompt: 'just a prompt' },
        '  ',
        { prompt: 'bad limit', goalRounds: 0 },
        { prompt: 'too many', goalRounds: 1001 },
        { prompt: 'half a round', goalRounds: 1.5 },
        { goalRounds: 2 },
        42,
        null,
      ]),
      [{ text: 'survey the workspace' }, { text: 'tidy the workspace', goalRounds: 2 }, { text: 'just a prompt' }],
    );
    assert.deepEqual(readExamplePrompts('not a list'), []);
    assert.equal(readExamplePrompts(Array.from({ length: 12 }, (_, i) => `p${i}`)).length, 8);
  });

  it("takes every one of the demo's scenes as a button", () => {
    const read = readExamplePrompts([...DEMO_PROMPTS]);
    assert.equal(read.length, DEMO_PROMPTS.length);
    assert.deepEqual(
      read.map((p) => (p.goalRounds !== undefined ? `Goal: ${p.text} (${p.goalRounds} rounds)` : p.text)),
      [...DEMO_PROMPT_LABELS],
    );
  });
});
