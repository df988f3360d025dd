import * as assert from 'node:assert/strict';
import { type Block, type Inline, parseInline, parseMarkdown, safeHref, stablePrefix } from '../../webview/src/lib/markdown';

/** Every href anywhere in the tree. */
function hrefs(blocks: Block[]): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  const inl = (ns: Inline[]): void => {
    for (const n of ns) {
      if (n.t === 'link') out.push(n.href);
      if ('c' in n) inl(n.c);
    }
  };
  const blk = (bs: Block[]): void => {
    for (const b of bs) {
      if (b.t === 'p' || b.t === 'h') inl(b.c);
      else if (b.t === 'list') b.items.forEach(blk);
      else if (b.t === 'quote') blk(b.c);
    }
  };
  blk(blocks);
  return out;
}

/** All text of inline nodes, flattened. */
function text(ns: Inline[]): string {
  return ns.map((n) => (n.t === 'text' || n.t === 'code' ? n.s : n.t === 'br' ? '\n' : text(n.c))).join('');
}

describe('webview markdown (model text is untrusted)', () => {
  it('keeps HTML as text: no tags are produced from model output', () => {
    const src = '<img src=x onerror="alert(1)"> <script>alert(1)</script> **<b>bold</b>**';
    const [p] = parseMarkdown(src);
    assert.equal(p.t, 'p');
    assert.equal(text((p as { c: Inline[] }).c), '<img src=x onerror="alert(1)"> <script>alert(1)</script> <b>bold</b>');
  });

  it('gives an href only to http(s) links', () => {
    const blocks = parseMarkdown(
      '[a](javascript:alert(1)) [b](https://example.com/x?y=1) [c](data:text/html,hi) [d](vscode://file/x) [e](HTTP://EXAMPLE.com) http://plain.example/path.',
    );
    assert.deepEqual(hrefs(blocks), [undefined, 'https://example.com/x?y=1', undefined, undefined, 'http://example.com/', 'http://plain.example/path']);
    assert.equal(safeHref('java\nscript:alert(1)'), undefined);
    assert.equal(safeHref('https://a.example/"onmouseover="x'), undefined);
  });

  it('reads fences, lists, headings, quotes and inline styles', () => {
    const blocks = parseMarkdown(
      '# Title\n\nSome *em* and **strong** and `code` and ~~gone~~.\n\n- one\n- two\n  - nested\n\n3. three\n4. four\n\n> quoted\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n---',
    );
    assert.deepEqual(
      blocks.map((b) => b.t),
      ['h', 'p', 'list', 'list', 'quote', 'code', 'hr'],
    );
    const p = blocks[1] as { c: Inline[] };
    assert.deepEqual(
      p.c.map((n) => n.t),
      ['text', 'em', 'text', 'strong', 'text', 'code', 'text', 'del', 'text'],
    );
    const ul = blocks[2] as Extract<Block, { t: 'list' }>;
    assert.equal(ul.ordered, false);
    assert.equal(ul.items.length, 2);
    assert.equal(ul.items[1][1].t, 'list', 'the indented item nests');
    const ol = blocks[3] as Extract<Block, { t: 'list' }>;
    assert.deepEqual([ol.ordered, ol.start, ol.items.length], [true, 3, 2]);
    assert.deepEqual(blocks[5], { t: 'code', lang: 'ts', s: 'const a = 1;\n\nconst b = 2;' });
  });

  it('leaves snake_case and lone stars alone', () => {
    assert.equal(text(parseInline('call read_file_now with a * b')), 'call read_file_now with a * b');
    assert.deepEqual(
      parseInline('read_file_now').map((n) => n.t),
      ['text'],
    );
  });

  it('runs an unclosed fence to the end (text cut mid-stream)', () => {
    assert.deepEqual(parseMarkdown('intro\n\n```js\nlet x'), [
      { t: 'p', c: [{ t: 'text', s: 'intro' }] },
      { t: 'code', lang: 'js', s: 'let x' },
    ]);
  });

  it('stays fast on hostile input', () => {
    const hostile = [
      '*'.repeat(50_000),
      '_a'.repeat(25_000),
      '['.repeat(20_000) + ']('.repeat(10_000),
      '`'.repeat(30_000),
      `${'> '.repeat(5_000)}x`,
      `${'- '.repeat(5_000)}x`,
    ];
    for (const src of hostile) {
      const t0 = performance.now();
      parseMarkdown(src);
      const ms = performance.now() - t0;
      assert.ok(ms < 500, `${JSON.stringify(src.slice(0, 12))}… took ${ms.toFixed(0)} ms`);
    }
  });

  it('finds the stable head of streamed text outside code fences', () => {
    assert.equal(stablePrefix('para one\n\npara two is being wr'), 'para one\n\n'.length);
    assert.equal(stablePrefix('no break yet'), 0);
    // A blank line inside an open fence is not a break: the fence is still growing.
    const fenced = 'intro\n\n```\ncode\n\nmore';
    assert.equal(stablePrefix(fenced), 'intro\n\n'.length);
    const closed = 'intro\n\n```\ncode\n```\n\nafter';
    assert.equal(stablePrefix(closed), closed.length - 'after'.length);
  });
});
