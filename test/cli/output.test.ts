import assert from 'node:assert/strict';
import { main } from '../../src/cli/main';
import { printable, terminalIo } from '../../src/cli/output';

// What reaches the terminal (issue 20 point 6): titles and output that remote programs name
// are shown, never acted on — escape sequences, C1 controls and bidi overrides are escaped.
describe('cli: terminal-safe output', () => {
  const attack = 'title\u001b]0;owned\u0007\u001b[2J\r\u009b31m\u202eevil\u2066x\u2069\u007f';

  it('escapes C0 (but newline and tab), DEL, C1, line separators and bidi controls as \\uXXXX', () => {
    assert.equal(printable(attack), 'title\\u001b]0;owned\\u0007\\u001b[2J\\u000d\\u009b31m\\u202eevil\\u2066x\\u2069\\u007f');
    assert.equal(printable('two\nlines\tand a tab, déjà vu, 漢字 🌳'), 'two\nlines\tand a tab, déjà vu, 漢字 🌳');
    assert.equal(printable('a\u2028b\u061cc\u200fd'), 'a\\u2028b\\u061cc\\u200fd');
  });

  it('keeps a JSON line the same JSON value (its escapes decode to the same characters)', () => {
    const value = { title: attack, n: 1 };
    const line = printable(JSON.stringify(value));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: checking that none is left
    assert.doesNotMatch(line, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    assert.deepEqual(JSON.parse(line), value);
  });

  it('every line main writes goes through it: out and err alike', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = terminalIo({ out: (l) => out.push(l), err: (l) => err.push(l), env: {} });
    io.out(attack);
    io.err(attack);
    assert.deepEqual([out, err], [[printable(attack)], [printable(attack)]]);
    const said: string[] = [];
    const code = await main([`no-such-command${attack}`], { out: (l) => said.push(l), err: (l) => said.push(l), env: {} });
    assert.equal(code, 2);
    assert.match(said.join('\n'), /no-such-commandtitle\\u001b\]0;owned/);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: checking that none is left
    assert.doesNotMatch(said.join('\n'), /[\u001b\u009b\u202e]/);
  });
});
