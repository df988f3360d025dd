// cli.version.vs_node: `arbor --version` as a user runs it (bin/arbor.js → the bundle in dist/,
// decision 0068), spawn to exit, ÷ a bare `node -e 0`, the floor of any Node program. Paired
// runs in alternating order after a warm run of each; medians.
import * as path from 'node:path';
import { arborBin } from '../test/support/cli-bundle';
import { type BenchOptions, type Figure, type FigureSpec, fmt, lastLine, median, pairedRuns, timeProcess } from './support';

export const name = 'cli';

const VERSION_VS_NODE: FigureSpec = { id: 'cli.version.vs_node', op: '<=', target: 1.5 };
export const figures: readonly FigureSpec[] = [VERSION_VS_NODE];

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const bin = arborBin();
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  const cwd = path.dirname(bin);
  const arbor = async (): Promise<number> => {
    const r = await timeProcess(process.execPath, [bin, '--version'], { env, cwd });
    if (r.code !== 0 || !/^arbor \d/.test(r.stdout)) throw new Error(`arbor --version: ${lastLine(r)}`);
    return r.ms;
  };
  const bare = async (): Promise<number> => {
    const r = await timeProcess(process.execPath, ['-e', '0'], { env, cwd });
    if (r.code !== 0) throw new Error(`node -e 0: ${lastLine(r)}`);
    return r.ms;
  };
  const n = opts.quick ? 15 : 41;
  const [a, b] = await pairedRuns(n, arbor, bare);
  opts.note(`arbor --version ${fmt(median(a))} ms vs node -e 0 ${fmt(median(b))} ms (medians of ${n} paired runs)`);
  return [{ ...VERSION_VS_NODE, value: median(a) / median(b) }];
}
