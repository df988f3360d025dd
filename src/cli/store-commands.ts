import { PriceBook } from '../core/cost/prices';
import { Store } from '../core/store/store';
import { UsageError } from './args';
import { pricesOf, storeDirOf } from './config';
import type { Command } from './output';
import { sessionListing } from './sessions';

// `arbor sessions` and `arbor log`: they read the store and nothing else (no harness, no model client).

export const sessions: Command = async (args, io) => {
  const prices = new PriceBook(pricesOf(args, io.env) ?? {});
  const store = await Store.open(storeDirOf(args, io.env), { mustExist: true });
  try {
    const list = await sessionListing(store, prices);
    if (args.options.has('json')) io.out(JSON.stringify(list));
    else
      for (const s of list)
        io.out(`${s.id}  ${s.origin.padEnd(8)} ${s.status.padEnd(11)} ${String(s.events ?? '?').padStart(6)} events  ${s.createdAt}  ${s.title ?? ''}`);
    for (const p of store.problems) io.err(`warning: ${p.file} was moved aside to ${p.movedTo}: ${p.reason}`);
    return 0;
  } finally {
    await store.close();
  }
};

export const log: Command = async (args, io) => {
  const [id] = args.positionals;
  if (!id) throw new UsageError('arbor log needs a session ID');
  const store = await Store.open(storeDirOf(args, io.env), { mustExist: true });
  try {
    if (!store.has(id)) throw new UsageError(`No session ${id} in ${store.dir}; see 'arbor sessions'.`);
    for (const e of await store.readEvents(id)) io.out(JSON.stringify(e));
    return 0;
  } finally {
    await store.close();
  }
};
