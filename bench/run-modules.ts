import { type BenchModule, type BenchOptions, cleanupTemps, completeFigures, type Figure, fmt, now } from './support';

/**
 * Runs bench modules one after another in this process. Every figure a module declares comes
 * back: measured, or as a MISS with the reason (the module crashed, or did not report it).
 * `crashed` is true when any module threw.
 */
export async function runModules(modules: readonly BenchModule[], opts: BenchOptions): Promise<{ figures: Figure[]; crashed: boolean }> {
  const figures: Figure[] = [];
  let crashed = false;
  for (const m of modules) {
    const t = now();
    try {
      figures.push(...completeFigures(m.figures, await m.run(opts), `the ${m.name} bench did not report it`));
      opts.note(`${m.name}: ${fmt((now() - t) / 1000)} s`);
    } catch (err) {
      crashed = true;
      opts.note(`${m.name}: FAILED ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      const first = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      figures.push(...completeFigures(m.figures, [], `the ${m.name} bench crashed: ${first}`));
    } finally {
      cleanupTemps();
    }
  }
  return { figures, crashed };
}
