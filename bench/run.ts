// `npm run bench [-- --quick] [MODULE…]`: runs every registered bench module (or the named
// ones) in this one process and
// prints one line per figure, `bench <id> <value> <op><target> ok|MISS`, plus `# ` context
// lines. A MISS is reported, not hidden: a figure that could not be measured prints
// `bench <id> - <op><target> MISS (reason)`, and so does every declared figure of a module that
// crashed or did not return it. The exit code is 0 unless a module crashed.
import * as os from 'node:os';
import * as acpServe from './acp.bench';
import * as acpClient from './acp-client.bench';
import * as agent from './agent.bench';
import * as checkpoint from './checkpoint.bench';
import * as cli from './cli.bench';
import * as cost from './cost.bench';
import * as extension from './extension.bench';
import * as goal from './goal.bench';
import * as hooks from './hooks.bench';
import * as mcp from './mcp.bench';
import * as panel from './panel.bench';
import * as peer from './peer.bench';
import * as placement from './placement.bench';
import * as placementSync from './placement-sync.bench';
import * as remote from './remote.bench';
import * as remoteDsh from './remote-dsh.bench';
import { runModules } from './run-modules';
import * as store from './store.bench';
import * as subagent from './subagent.bench';
import { type BenchModule, fmt, formatFigure, now } from './support';
import * as tools from './tools.bench';
import * as webview from './webview.bench';
import * as workflow from './workflow.bench';
import * as worktree from './worktree.bench';

/** Every bench module; later ones register here. */
const MODULES: BenchModule[] = [
  store,
  agent,
  subagent,
  tools,
  workflow,
  goal,
  hooks,
  cost,
  acpServe,
  acpClient,
  remote,
  remoteDsh,
  panel,
  webview,
  extension,
  mcp,
  checkpoint,
  worktree,
  cli,
  peer,
  placement,
  placementSync,
];

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const names = args.filter((a) => !a.startsWith('--'));
  const unknown = [...args.filter((a) => a.startsWith('--') && a !== '--quick'), ...names.filter((n) => !MODULES.some((m) => m.name === n))];
  if (unknown.length > 0) {
    console.error(`usage: node out/bench/run.js [--quick] [MODULE…]   (modules: ${MODULES.map((m) => m.name).join(', ')}; unknown: ${unknown.join(' ')})`);
    return 2;
  }
  const quick = args.includes('--quick');
  const modules = names.length > 0 ? MODULES.filter((m) => names.includes(m.name)) : MODULES;
  const note = (line: string) => console.log(`# ${line}`);
  const t0 = now();
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  note(`mode ${quick ? 'quick' : 'full'}, node ${process.version}, ${process.platform}/${process.arch}, ${os.cpus().length} cpus, load average ${load()}`);
  const { figures, crashed } = await runModules(modules, { quick, note });
  for (const f of figures) console.log(formatFigure(f));
  note(`total ${fmt((now() - t0) / 1000)} s, load average ${load()} (other processes on the machine skew the fsync-bound figures)`);
  return crashed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
