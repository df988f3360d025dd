import * as assert from 'node:assert/strict';
import { type Block, type Inline, parseMarkdown } from '../../webview/src/lib/markdown';

const text = (ns: Inline[]): string => ns.map((n) => (n.t === 'text' || n.t === 'code' ? n.s : n.t === 'br' ? '\n' : text(n.c))).join('');
const table = (b: Block | undefined) => {
  assert.ok(b && b.t === 'table', `a table block, got ${JSON.stringify(b)}`);
  return { align: b.align, head: b.head.map(text), rows: b.rows.map((r) => r.map(text)) };
};

describe('webview markdown tables (GFM)', () => {
  it('reads header, alignment and rows; short rows are padded, long rows cut to the header', () => {
    const blocks = parseMarkdown('Intro line\n| a | b | c |\n|:--|:-:|--:|\n| 1 | **2** | `3` |\n| only |\n| x | y | z | extra |\n\nAfter.');
    assert.equal(blocks[0].t, 'p');
    assert.deepEqual(table(blocks[1]), {
      align: ['left', 'center', 'right'],
      head: ['a', 'b', 'c'],
      rows: [
        ['1', '2', '3'],
        ['only', '', ''],
        ['x', 'y', 'z'],
      ],
    });
    assert.equal(blocks[2].t, 'p');
  });

  it('takes escaped pipes as text, and needs a delimiter row of the same width', () => {
    assert.deepEqual(table(parseMarkdown('a | b\n--- | ---\nx \\| y | z')[0]).rows, [['x | y', 'z']]);
    assert.equal(parseMarkdown('a | b\n--- | --- | ---\nx | y')[0].t, 'p', 'a delimiter row of another width is not a table');
    assert.equal(parseMarkdown('a | b\nnot a delimiter\n')[0].t, 'p');
  });

  it('keeps model HTML as text in cells and caps the columns of a hostile line', () => {
    const t = table(parseMarkdown('| <img src=x onerror=alert(1)> |\n| --- |\n| <script>x</script> |')[0]);
    assert.deepEqual(t.head, ['<img src=x onerror=alert(1)>']);
    assert.deepEqual(t.rows, [['<script>x</script>']]);
    const wide = '|'.repeat(5000);
    const blocks = parseMarkdown(`${wide}\n${'|---'.repeat(5000)}|\n`);
    assert.ok(blocks.every((b) => b.t !== 'table' || b.head.length <= 32));
  });
});
