// A host meant to be killed (the reaper spec): opens a harness whose codex is the fake
// program at argv[4], starts a remote child, prints `pgid <n> child <id>` once the child's
// program runs, then waits to be killed with -9.
//   node crash-host.js <storeDir> <workspace> <fakeCommand>
import { Harness } from '../../src/core/harness';
import { onEvents } from '../support/changes';
import { ModelServer } from '../support/model-server';

void (async () => {
  const [storeDir, workspace, command] = process.argv.slice(2);
  const server = await ModelServer.start();
  const h = await Harness.open({
    storeDir,
    workspace: [workspace],
    model: { baseURL: server.baseURL, name: 'm', apiKey: 'k', maxRetries: 0 },
    sandbox: 'read-only',
    approval: 'never',
    remote: { codex: { command, env: { FAKE_MODE: 'stubborn' } } },
  });
  const root = await h.createSession();
  const run = await h.subagents.start(root, 'codex', { prompt: 'go' });
  const off = onEvents(h, (id, e) => {
    if (id === run.id && e.type === 'subagent/remote') {
      off();
      // Once the event is durable: the reaper reads it from disk.
      setImmediate(
        () =>
          void h
            .resident(run.id)!
            .flush()
            .then(() => process.stdout.write(`pgid ${e.pgid} child ${run.id}\n`)),
      );
    }
  });
  setInterval(() => undefined, 1000);
})();
