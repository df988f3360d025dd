// Child process of the memory figure: `node --expose-gc out/bench/memory-probe.js DIR ID`.
// Prints one JSON line: resident memory before and after the store holds the session's tree.

import { loadSqlJs } from '../src/core/store/sqljs';
import { Store } from '../src/core/store/store';

const gc = (globalThis as { gc?: () => void }).gc;

async function settle(): Promise<NodeJS.MemoryUsage> {
  if (!gc) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  return process.memoryUsage();
}

async function main(): Promise<void> {
  const [dir, id] = process.argv.slice(2);
  await loadSqlJs(); // the WASM module is not the store's memory: load it before the baseline
  const before = await settle();
  const store = await Store.open(dir);
  let session: Awaited<ReturnType<Store['inspect']>> | undefined = await store.inspect(id);
  const events = session.length;
  const loaded = process.memoryUsage();
  session = undefined; // drop the folded Session: what remains is what the store holds
  const after = await settle();
  process.stdout.write(`${JSON.stringify({ events, before, loaded, after })}\n`);
  await store.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
