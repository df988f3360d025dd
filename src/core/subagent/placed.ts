import { SubagentError, type SubagentProvider } from './types';

// A request's `placement: "<name>"` (decision 0074) names a provider `placed:<name>`, one per
// configured placement (the placement row registers them). Resolved here, before every other
// start check, so tools, agent files and workflow `agent()` options all go one way.

export const PLACED_PREFIX = 'placed:';

/** The provider a start runs on: `providerName` itself, or the placed provider its placement names. */
export function placedProviderName(providers: ReadonlyMap<string, SubagentProvider>, providerName: string, placement: string | undefined): string {
  if (placement === undefined) return providerName;
  if (typeof placement !== 'string' || placement === '')
    throw new SubagentError('BAD_REQUEST', `placement must be the name of a configured placement, got ${JSON.stringify(placement)}.`);
  if (providerName !== 'spawn')
    throw new SubagentError(
      'UNSUPPORTED_CAPABILITY',
      `Provider "${providerName}" cannot be placed: only a fresh child (subagent, workflow agent()) runs on a placement. Leave placement out, or use subagent.`,
    );
  const name = `${PLACED_PREFIX}${placement}`;
  if (providers.get(name)?.placement) return name;
  const known = [...providers.values()].flatMap((p) => (p.placement ? [p.placement.name] : []));
  throw new SubagentError(
    'UNKNOWN_PLACEMENT',
    known.length
      ? `No placement named "${placement}". Configured placements: ${known.join(', ')}.`
      : `No placement named "${placement}": none is configured (arbor.placements, or "placements" in the CLI's --config file). Leave placement out to run the child here.`,
  );
}
