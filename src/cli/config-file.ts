import * as fs from 'node:fs';
import { type ParsedArgs, UsageError } from './args';

/**
 * The user's own config file (`--config FILE`, else `$ARBOR_CONFIG`), parsed once per reader:
 * remote programs and placements both live in it. Undefined when none is named; an unreadable
 * or malformed file refuses the start, naming it.
 */
export function readConfigFile(args: ParsedArgs, env: NodeJS.ProcessEnv): { file: string; raw: unknown } | undefined {
  const opt = args.options.get('config');
  const file = typeof opt === 'string' ? opt : env.ARBOR_CONFIG;
  if (!file) return undefined;
  try {
    return { file, raw: JSON.parse(fs.readFileSync(file, 'utf8')) };
  } catch (err) {
    throw new UsageError(`Cannot read the config file ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
