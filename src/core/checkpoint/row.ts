import type { FeatureRow } from '../feature/rows';
import { type CheckpointOptions, CheckpointService } from './service';

/** The checkpoints row: every agent's file tools and commands recorded per step (decision 0059). */
export function checkpointRow(options: CheckpointOptions & { storeDir: string }): FeatureRow<CheckpointService> {
  return {
    name: 'checkpoints',
    wire({ host }) {
      const service = new CheckpointService(options, { storeDir: options.storeDir, store: host.store, resident: (id) => host.resident(id) });
      const r = service.recorder;
      return {
        service,
        hooks: {
          beforeToolCall: (c) => r.before(c),
          afterToolCall: (c) => r.after(c),
          stepAnswered: (id) => r.flush(id),
          close: () => service.close(),
        },
      };
    },
  };
}
