import type { FeatureRow } from '../feature/rows';
import { acpMirrors } from '../remote/acp-mirrors';
import { createSubagentTool } from '../subagent/tools/subagent-tool';
import { type PlacedProvider, type PlacedTrace, placedProvider } from './placed-provider';
import type { PlacementInfo, PlacementTransport } from './types';

/** What the hosts ask of the configured placements (the tree's "Run on a placement…"). */
export interface PlacementService {
  /** The configured placements' names, in configuration order. */
  names(): string[];
  /** A placement's last check (where, round trip); undefined before one. */
  info(name: string): PlacementInfo | undefined;
}

/**
 * The placements row (decision 0074): a provider `placed:<name>` per configured transport, and
 * the `subagent` tool again with its `placement` argument (registered after the delegation row's,
 * so it replaces it; nothing is registered without placements, so request heads stay as they
 * were). Closing the harness removes the nodes' copies on the other side.
 */
export function placementRow(
  transports: readonly PlacementTransport[],
  secrets: () => readonly string[] = () => [],
  trace?: PlacedTrace,
): FeatureRow<PlacementService> {
  return {
    name: 'placement',
    wire({ subagents, tools, registerProvider, host }) {
      const children = acpMirrors({ store: host.store, registry: subagents.mirrors, streamOf: (id) => host.streamOf(id) });
      const providers = new Map<string, PlacedProvider>();
      for (const t of transports) {
        const p = placedProvider(t, secrets, children, trace);
        providers.set(t.settings.name, p);
        registerProvider(p);
      }
      if (providers.size) tools.register(createSubagentTool(subagents, [...providers.keys()]));
      return {
        service: { names: () => [...providers.keys()], info: (name) => providers.get(name)?.info },
        hooks: {
          close: async () => {
            await Promise.all([...providers.values()].map((p) => p.cleanup()));
          },
        },
      };
    },
  };
}
