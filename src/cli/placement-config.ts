import { readPlacements } from '../core/placement/settings';
import type { PlacementSettings } from '../core/placement/types';
import { type ParsedArgs, UsageError } from './args';
import { readConfigFile } from './config-file';

/**
 * Placements (issue 26, decision 0071) from `--config FILE` or `$ARBOR_CONFIG`, the same user's
 * file as the remote programs: `{"placements": [{"name": "box", "kind": "ssh", "host": "box.example"},
 * {"name": "pod", "kind": "container", "image": "localhost/arbor:0.1.0"}]}`. A problem in any
 * entry refuses the start, naming the entry and what to fix.
 */
export function placementsFromConfig(args: ParsedArgs, env: NodeJS.ProcessEnv, read = readConfigFile(args, env)): PlacementSettings[] | undefined {
  if (!read) return undefined;
  const { file, raw } = read;
  const { placements, problems } = readPlacements((raw as { placements?: unknown } | null)?.placements, `${file}: placements`);
  if (problems.length) throw new UsageError(problems.map((p) => p.message).join('\n'));
  return placements.length ? placements : undefined;
}
