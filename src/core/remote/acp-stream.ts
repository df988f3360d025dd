import type * as acp from '@agentclientprotocol/sdk/unstable';
import type { RemoteProcess } from './process';
import { record } from './run';

type Message = acp.Stream extends { readable: ReadableStream<infer M> } ? M : never;

/**
 * The ACP connection over an agent's stdio, on the same process plumbing every remote program
 * uses (decision 0036): its stdout lines (length-capped, the idle timeout running) parsed as
 * JSON-RPC messages, ours written one per line. A line that is not a JSON object (a stray log
 * line on stdout, an over-long line) is counted and skipped, never fatal. `backlog` holds the
 * next read while the messages already read are still being applied (the SDK does not wait for
 * a notification's handler), so a flood waits in the agent's pipe, not in Arbor's memory.
 */
export function processStream(proc: RemoteProcess, skipped: (kind: string) => void, backlog?: () => Promise<void> | undefined): acp.Stream {
  const lines = proc.lines();
  const readable = new ReadableStream<Message>({
    async pull(controller) {
      await backlog?.();
      for (;;) {
        const next = await lines.next();
        if (next.done) return controller.close();
        const line = next.value;
        if ('tooLong' in line) {
          skipped('line-too-long');
          continue;
        }
        let m: unknown;
        try {
          m = JSON.parse(line.text);
        } catch {
          skipped('non-json');
          continue;
        }
        if (!record(m)) {
          skipped('non-object');
          continue;
        }
        controller.enqueue(m as Message);
        return;
      }
    },
  });
  const writable = new WritableStream<Message>({
    write(m) {
      proc.writeLine(JSON.stringify(m));
    },
    close() {
      proc.child.stdin?.end();
    },
  });
  return { readable, writable };
}
