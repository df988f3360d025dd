import * as fs from 'node:fs';
import { readPlacements } from '../core/placement/settings';
import type { PlacementSettings } from '../core/placement/types';
import { type ParsedArgs, UsageError } from './args';

/**
 * Placements (issue 26, decision 0071) from `--config FILE` or `$ARBOR_CONFIG`, the same user's
 * file as the remote programs: `{"placements": [{"name": "box", "kind": "ssh", "host": "box.example"},
 * {"name": "pod", "kind": "container", "image": "localhost/arbor:0.1.0"}]}`. A problem in any
 * entry refuses the start, naming the entry and what to fix.
 */
export function placementsFromConfig(args: ParsedArgs, env: NodeJS.ProcessEnv): PlacementSettings[] | undefined {
  const opt = args.options.get('config');
  const file = typeof opt === 'string' ? opt : env.ARBOR_CONFIG;
  if (!file) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`Cannot read the config file ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const { placements, problems } = readPlacements((raw as { placements?: unknown } | null)?.placements, `${file}: placements`);
  if (problems.length) throw new UsageError(problems.map((p) => p.message).join('\n'));
  return placements.length ? placements : undefined;
}
