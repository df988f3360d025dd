import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeError } from '../core/errors';
import { arborVersion } from '../core/version';
import { parseArgs, UsageError } from './args';
import { type Io, terminalIo } from './output';

let inspectorSignalIgnored = false;

/**
 * Node opens its inspector on 127.0.0.1:9229 when the process gets SIGUSR1, and anything that
 * can signal Arbor could then attach and run code in it (issue 20). `--disable-sigusr1` exists
 * only from Node 22.14; a listener of our own replaces Node's handler on every version (tested:
 * test/cli/inspector-signal.test.ts). Installed once per process, for `arbor run` and `arbor acp` alike.
 */
export function ignoreInspectorSignal(): void {
  if (inspectorSignalIgnored) return;
  inspectorSignalIgnored = true;
  process.on('SIGUSR1', () => undefined);
}

/**
 * Entry point: returns the exit code (0 done, 1 the turn failed, 2 bad usage). It reads its
 * arguments before it loads anything else (decision 0068): `--version` and a usage error cost a
 * bare Node start plus this file; `--help` adds the sandbox probe; a command loads the commands
 * (under esbuild, dist/cli-commands.js) and, through their handler map, only its own modules.
 */
export async function main(argv: readonly string[], raw: Io): Promise<number> {
  ignoreInspectorSignal();
  // Text from the store and from remote programs reaches the terminal: never as control sequences.
  const io = terminalIo(raw);
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`arbor: ${err.message}\nRun 'arbor --help' for usage.`);
    return 2;
  }
  const [name, ...rest] = args.positionals;
  // `arbor --version`: the package version (a parent Arbor records it for a dsh-sdk child).
  if (args.options.has('version') && !name) {
    io.out(`arbor ${arborVersion()}`);
    return 0;
  }
  if (!name || args.options.has('help') || name === 'help') {
    try {
      const [{ helpText }, { DEFAULT_BWRAP, sandboxStatus }] = await Promise.all([import('./help'), import('../core/tools/sandbox/detect')]);
      io.out(helpText(await sandboxStatus(io.env.ARBOR_BWRAP || DEFAULT_BWRAP)));
      return name || args.options.has('help') ? 0 : 2;
    } catch (err) {
      io.err(`arbor: ${describeError(err)}`);
      return 1;
    }
  }
  const commands = await loadCommands(io.env);
  const code = await commands.dispatch(name, { positionals: rest, options: args.options }, io);
  commands.save();
  return code;
}

type Commands = typeof import('./commands');

/**
 * The commands: in the bundle (dist/cli.js), the commands bundle beside it compiled with the V8
 * code cache (decision 0085); in the compiled tree, the module itself.
 */
async function loadCommands(env: NodeJS.ProcessEnv): Promise<Commands & { save(): void }> {
  // Loaded here, not at the top: `arbor --version` needs neither (nor node:vm, crypto, v8).
  const [{ tierUpOnlyHotWasm }, { codeCacheDir, requireWithCodeCache }] = await Promise.all([import('./wasm-tiering'), import('./code-cache')]);
  // Before anything compiles: V8 keys its code cache on its flags too.
  tierUpOnlyHotWasm();
  const bundle = path.join(__dirname, 'cli-commands.js');
  if (path.basename(__filename) === 'cli.js' && fs.existsSync(bundle)) {
    const loaded = requireWithCodeCache(bundle, codeCacheDir(env));
    return { ...(loaded.exports as Commands), save: loaded.save };
  }
  return { ...(await import('./commands')), save: () => undefined };
}

if (require.main === module) {
  const io: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`), env: process.env };
  main(process.argv.slice(2), io).then((code) => {
    process.exitCode = code;
  });
}
