import { type ContainerOptions, ContainerTransport } from './container';
import { SshTransport } from './ssh';
import type { PlacementSettings, PlacementTransport } from './types';

/** One row per placement kind: how a configured placement becomes its transport (`local` has none). */
const TRANSPORTS: { [K in PlacementSettings['kind']]: (s: PlacementSettings, o: ContainerOptions) => PlacementTransport } = {
  ssh: (s, o) => new SshTransport(s, o),
  container: (s, o) => new ContainerTransport(s, o),
};

/** The transport of a configured placement (checked by `settings.ts`). */
export function createTransport(settings: PlacementSettings, opts: ContainerOptions): PlacementTransport {
  return TRANSPORTS[settings.kind](settings, opts);
}
