// panel.open.scale: time from the panel's first request (`webview/ready`) to its first
// snapshot with 1,000 stored conversations of 100 events each ÷ the same with 10 (≤ 3), through
// the real PanelController over a real harness opening the real store.
// tree.status.fold_vs_parse: folding the tree's summary (status, tokens, cache hits, reports,
// last stop) of a 10k-event session ÷ JSON.parse of its bytes (≤ 2).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Harness } from '../src/core/harness';
import { Store } from '../src/core/store/store';
import { PanelController, type ViewPort } from '../src/extension/controller';
import { TreeModel } from '../src/extension/presenter/tree-model';
import type { HostToWebview, PanelSettings } from '../src/protocol';
import { type BenchOptions, type Figure, type FigureSpec, fmt, header, makeEvents, median, now, tempDir } from './support';

export const name = 'panel';
const OPEN: FigureSpec = { id: 'panel.open.scale', op: '<=', target: 3 };
const FOLD: FigureSpec = { id: 'tree.status.fold_vs_parse', op: '<=', target: 2 };
export const figures = [OPEN, FOLD] as const;

const SETTINGS: PanelSettings = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'bench' };

async function storeWith(n: number): Promise<string> {
  const dir = tempDir(`arbor-panel-${n}-`);
  const storeDir = path.join(dir, 'store');
  const store = await Store.open(storeDir);
  const events = makeEvents(0, 100);
  for (let i = 0; i < n; i++) await store.createSession(header(`s-${String(i).padStart(5, '0')}`), events);
  await store.close();
  fs.mkdirSync(path.join(dir, 'ws'));
  return dir;
}

/**
 * A copy of the store as a crash leaves it: a process appended (so the stored summaries were
 * marked stale) and died without closing. The copy is taken while the writer still holds it.
 */
async function crashedCopy(dir: string): Promise<string> {
  const copy = tempDir('arbor-panel-crash-');
  const store = await Store.open(path.join(dir, 'store'));
  const id = store.list()[0].id;
  await store.append(
    id,
    makeEvents(await store.length(id), 5).map((e, i) => ({ ...e, seq: 100 + i })),
  );
  // The lock and its liveness token (a socket, which cpSync refuses) are the open store's own.
  fs.cpSync(dir, copy, { recursive: true, filter: (src) => !path.basename(src).startsWith('arbor.lock') });
  await store.close();
  return copy;
}

/** webview/ready → state/snapshot, one cold open of the store (a window opening the panel). */
async function openMs(dir: string): Promise<number> {
  let snapshotAt = 0;
  let h: Harness | undefined;
  const c = new PanelController(
    async () =>
      (h ??= await Harness.open({
        storeDir: path.join(dir, 'store'),
        workspace: [path.join(dir, 'ws')],
        model: { baseURL: 'http://127.0.0.1:9/v1', name: 'bench', apiKey: 'k' },
        sandbox: 'workspace-write',
        approval: 'never',
      })),
    { settings: () => SETTINGS, openTranscript: () => undefined, log: () => undefined, progress: (_t, w) => w() },
  );
  const port: ViewPort = {
    view: 'panel',
    post: (m: HostToWebview) => {
      if (m.type === 'state/snapshot' && !snapshotAt) snapshotAt = now();
    },
  };
  c.connect(port);
  const t0 = now();
  await c.receive(port, { type: 'webview/ready', view: 'panel' });
  const ms = snapshotAt - t0;
  await c.dispose();
  await (h as Harness | undefined)?.close();
  return ms;
}

async function panelOpen(opts: BenchOptions): Promise<Figure> {
  const small = await storeWith(10);
  const large = await storeWith(1000);
  // The first open after a crash reads every log once (its summaries are stale): recovery
  // closes open turns and learns every summary, so the panel reads no log again.
  const crashOpen = [await openMs(await crashedCopy(small)), await openMs(await crashedCopy(large))];
  const rounds = opts.quick ? 3 : 7;
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i++) {
    a.push(await openMs(small));
    b.push(await openMs(large));
  }
  const ratio = median(b) / median(a);
  opts.note(
    `panel.open: ${fmt(median(b))} ms with 1,000 conversations × 100 events, ${fmt(median(a))} ms with 10 (medians of ${rounds}, after a clean close); ` +
      `the first open after a crash (stale summaries: every log read once): ${fmt(crashOpen[1])} ms and ${fmt(crashOpen[0])} ms`,
  );
  return { ...OPEN, value: ratio };
}

function statusFold(opts: BenchOptions): Figure {
  const events = makeEvents(0, 10_000);
  const bytes = JSON.stringify(events);
  const rounds = opts.quick ? 5 : 15;
  const fold: number[] = [];
  const parse: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = now();
    JSON.parse(bytes);
    parse.push(now() - t0);
    const tree = new TreeModel(() => undefined);
    const h = { ...header('s-fold'), origin: 'user' as const };
    const t1 = now();
    tree.addHeader(h);
    tree.foldAll(h.id, events);
    tree.node(h.id);
    fold.push(now() - t1);
  }
  opts.note(`tree.status fold of 10k events ${fmt(median(fold))} ms, JSON.parse of its ${fmt(bytes.length / 1e6)} MB ${fmt(median(parse))} ms`);
  return { ...FOLD, value: median(fold) / median(parse) };
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  return [statusFold(opts), await panelOpen(opts)];
}
