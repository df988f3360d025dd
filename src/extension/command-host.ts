// What the VS Code commands and the policy picker need of the host. `ArborHost` implements
// it; they import this, never `host.ts`, so the host can build them without an import circle.
import type { PanelSettings } from '../protocol';
import type { PanelController } from './controller';

export interface CommandHost {
  readonly controller: PanelController;
  /** What the panel shows now (the picker marks the policy in force). */
  panelSettings(): PanelSettings;
  openTranscript(sessionId: string): void;
  /** Store (or, with '', clear) the API key; the model settings apply at the next request. */
  setApiKey(key: string): Promise<void>;
}
