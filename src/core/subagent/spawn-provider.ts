import type { SubagentProvider } from './types';

/** A fresh child in this process: empty history, the parent's preset composition. */
export const spawnProvider: SubagentProvider = {
  name: 'spawn',
  capabilities: { outputSchema: true, depthLimit: true, toolFilter: true, persona: true },
  inheritsParentContext: false,
  prepare: () => ({}),
};
