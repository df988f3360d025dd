// A harness meant to be killed: run as a child process by the budget crash spec.
//
//   node budget-writer.js <storeDir> <workspace> <baseURL>
//
// Opens a harness, creates a conversation, sets a budget on it (a durable `budget/set`), writes
// `budget <id>` to stdout, then waits to be killed (SIGKILL, no close: the summaries stay stale).
import { Harness } from '../../src/core/harness';

async function main(): Promise<void> {
  const [storeDir, workspace, baseURL] = process.argv.slice(2);
  const h = await Harness.open({
    storeDir,
    workspace: [workspace],
    model: { baseURL, name: 'test-model', apiKey: 'test', maxRetries: 0, maxTokens: 64 },
    sandbox: 'read-only',
    approval: 'never',
  });
  const agent = await h.createSession({ title: 'budgeted' });
  await h.setBudget(agent.id, { maxTokens: 40 });
  process.stdout.write(`budget ${agent.id}\n`);
  setInterval(() => undefined, 1000);
}

void main();
