// The tree's first frame calls nothing that loads ICU data (decisions 0067, 0079): a
// `localeCompare` or a `toLocale…String` with a locale loads collation or number-format data on
// its first call in a page — 30–50 ms of a fresh panel's first frame. The files a tree row and
// the tree's state run are read for those calls; `lib/format.ts` holds the one cached
// `Intl.NumberFormat` (for non-integers), which this allows.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../support/repo-root';

const ICU = /\.localeCompare\(|\.toLocale(?:String|DateString|TimeString)\(|new Intl\.Collator\(/;

describe('webview tree: no ICU in the first frame', () => {
  it('the tree, its rows, their badges and helpers call no localeCompare, toLocale…String or Intl.Collator', () => {
    const web = path.join(repoRoot(), 'webview', 'src');
    const files = [
      'state/tree.svelte.ts',
      'lib/tree-rows.ts',
      'lib/row-title.ts',
      'lib/run-words.ts',
      'lib/context.ts',
      'components/Tree.svelte',
      'components/TreeRow.svelte',
      ...fs
        .readdirSync(path.join(web, 'components'))
        .filter((f) => /Badge\.svelte$|^Row[A-Z]\w*\.svelte$|^BudgetBar\.svelte$|^OriginIcon\.svelte$/.test(f))
        .map((f) => `components/${f}`),
    ];
    assert.ok(files.length >= 15, `the row's files are found (${files.length})`);
    const found = files.flatMap((f) =>
      fs
        .readFileSync(path.join(web, f), 'utf8')
        .split('\n')
        .flatMap((line, i) => (ICU.test(line) && !line.trim().startsWith('//') ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
    assert.deepEqual(found, []);
  });

  it("lib/format.ts's tree helpers go through `grouped` and one cached formatter", () => {
    const src = fs.readFileSync(path.join(repoRoot(), 'webview', 'src', 'lib', 'format.ts'), 'utf8');
    const calls = src.split('\n').filter((l) => ICU.test(l) && !l.trim().startsWith('//') && !l.trim().startsWith('*'));
    // `clockTime` (the transcript's message times, not the tree) is the only one.
    assert.deepEqual(
      calls.map((l) => l.trim()),
      ["return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });"],
    );
  });
});
