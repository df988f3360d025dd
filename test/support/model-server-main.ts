// The test model server alone in its own process (model-server-process.ts starts it): a bench
// whose figure is Arbor's use of one event loop keeps the server's CPU off that loop, as a
// real model's is. Commands arrive as IPC messages; each is answered with its `id`.
import { ModelServer, type Reply } from './model-server';

type Command = { id: number; op: 'fallback'; reply: Reply } | { id: number; op: 'reset' } | { id: number; op: 'cpu' } | { id: number; op: 'stop' };

async function main(): Promise<void> {
  const server = await ModelServer.start();
  const ops: { [K in Command['op']]: (c: Extract<Command, { op: K }>) => unknown } = {
    fallback: (c) => void server.setFallback(() => c.reply),
    reset: () => server.reset(),
    cpu: () => {
      const u = process.cpuUsage();
      return { cpuMs: (u.user + u.system) / 1000 };
    },
    stop: async () => {
      await server.stop();
      setImmediate(() => process.exit(0));
    },
  };
  // The record of requests is not read across the process boundary: dropped, so a long bench holds no bodies.
  setInterval(() => {
    server.requests.length = 0;
  }, 1000).unref();
  process.on('message', (c: Command) => {
    Promise.resolve()
      .then(() => (ops[c.op] as (c: Command) => unknown)(c))
      .then(
        (value) => process.send?.({ id: c.id, value }),
        (err: unknown) => process.send?.({ id: c.id, error: String(err) }),
      );
  });
  process.send?.({ id: 0, value: server.baseURL });
}

void main();
