import { readPlacements } from '../core/placement/settings';
import type { PlacementSettings } from '../core/placement/types';
import type { InspectSetting } from './remote-settings';

export interface PlacementsSettingRead {
  /** Absent: none configured, or Restricted Mode (a placement runs Arbor elsewhere with the user's rights). */
  placements?: PlacementSettings[];
  /** Entries left out, and why (for the log). */
  problems: string[];
}

/**
 * `arbor.placements` (issue 26, decision 0071) from the user's own settings only, like the remote
 * programs (decision 0038): a workspace must never name a host, an image or what runs there. The
 * setting is machine-scoped; reading `globalValue` alone keeps that true whatever a
 * `settings.json` holds. None in Restricted Mode.
 */
export function readPlacementSettings(inspect: InspectSetting, trusted: boolean): PlacementsSettingRead {
  if (!trusted) return { problems: [] };
  const { placements, problems } = readPlacements(inspect('placements')?.globalValue, 'arbor.placements');
  return { ...(placements.length ? { placements } : {}), problems: problems.map((p) => p.message) };
}
