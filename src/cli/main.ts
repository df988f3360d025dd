import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeError } from '../core/errors';
import { StoreError } from '../core/store/errors';
import { DEFAULT_BWRAP, sandboxStatus } from '../core/tools/sandbox/detect';
import { parseArgs, UsageError } from './args';
import { COMMANDS, type Io } from './commands';
import { helpText } from './help';
import { terminalIo } from './output';

/** The package's own version (out/src/cli → the package root), read when asked. */
function arborVersion(): string {
  try {
    return JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

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

/** Entry point: returns the exit code (0 done, 1 the turn failed, 2 bad usage). */
export async function main(argv: readonly string[], raw: Io): Promise<number> {
  ignoreInspectorSignal();
  // Text from the store and from remote programs reaches the terminal: never as control sequences.
  const io = terminalIo(raw);
  try {
    const args = parseArgs(argv);
    const [name, ...rest] = args.positionals;
    // `arbor --version`: the package version (a parent Arbor records it for a dsh-sdk child).
    if (args.options.has('version') && !name) {
      io.out(`arbor ${arborVersion()}`);
      return 0;
    }
    if (!name || args.options.has('help') || name === 'help') {
      io.out(helpText(await sandboxStatus(io.env.ARBOR_BWRAP || DEFAULT_BWRAP)));
      return name || args.options.has('help') ? 0 : 2;
    }
    const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
    if (!cmd) throw new UsageError(`Unknown command "${name}". Commands: ${Object.keys(COMMANDS).join(', ')}.`);
    return await cmd({ positionals: rest, options: args.options }, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`arbor: ${err.message}\nRun 'arbor --help' for usage.`);
      return 2;
    }
    if (err instanceof StoreError && (err.code === 'LOCKED' || err.code === 'NO_STORE')) {
      io.err(`arbor: ${err.message}`);
      return 2;
    }
    io.err(`arbor: ${describeError(err)}`);
    return 1;
  }
}

if (require.main === module) {
  const io: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`), env: process.env };
  main(process.argv.slice(2), io).then((code) => {
    process.exitCode = code;
  });
}
