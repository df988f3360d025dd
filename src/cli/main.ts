import { describeError } from '../core/errors';
import { StoreError } from '../core/store/errors';
import { DEFAULT_BWRAP, sandboxStatus } from '../core/tools/sandbox/detect';
import { parseArgs, UsageError } from './args';
import { COMMANDS, type Io } from './commands';
import { helpText } from './help';

/** Entry point: returns the exit code (0 done, 1 the turn failed, 2 bad usage). */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  try {
    const args = parseArgs(argv);
    const [name, ...rest] = args.positionals;
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
