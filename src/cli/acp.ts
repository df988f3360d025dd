import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { type AnyMessage, ndJsonStream } from '@agentclientprotocol/sdk/unstable';
import { guardInput, MAX_MESSAGE_BYTES, refusalAnswer, refusalText } from '../acp/input-guard';
import { BatchedOutput } from '../acp/output';
import { acpApprovalPort } from '../acp/permission';
import { AcpServer } from '../acp/server';
import { NodeSync } from '../acp/sync';
import { Workspaces } from '../acp/workspaces';
import { autoApprove, neverApprove } from '../core/policy/approval';
import { programReadNames } from '../core/remote/program-reads';
import { arborVersion } from '../core/version';
import { oneOf, type ParsedArgs, positiveInt, UsageError } from './args';
import { harnessConfig, refuseMadeByCommand, workspaceOf } from './config';
import { mcpDeployment } from './mcp';
import type { Command } from './output';
import { onStopSignals } from './stop-signals';

/** How long a permission request waits for the client before it is a denial (ms). */
const DEFAULT_PERMISSION_TIMEOUT_MS = 300_000;

/**
 * `arbor acp`: Arbor as an ACP agent over stdio (decision 0037). Stdout carries JSON-RPC only
 * (anything else goes to stderr); stdin EOF or SIGTERM cancels running turns, flushes the
 * stores and exits 0; Ctrl+C does the same, its remote programs stopped within a bound, and exits 130.
 */
export const acpCommand: Command = async (args, io) => {
  // Approvals default to asking the client; `never` refuses, `auto` allows, as for run.
  const approval = oneOf('approval', args.options.get('approval'), ['ask', 'never', 'auto'] as const, 'ask');
  const childApproval = oneOf('child-approval', args.options.get('child-approval'), ['never', 'escalate'] as const, 'never');
  const timeoutMs = positiveInt('permission-timeout', args.options.get('permission-timeout')) ?? DEFAULT_PERMISSION_TIMEOUT_MS;
  const rest: ParsedArgs = { positionals: args.positionals, options: new Map([...args.options].filter(([k]) => k !== 'approval')) };
  const base = harnessConfig(rest, io.env); // validates every other flag before stdin is read
  const defaultRoot = workspaceOf(args);
  const explicitStore = args.options.has('store') || !!io.env.ARBOR_STORE;

  // Nothing but JSON-RPC on stdout: a stray console.log would corrupt the stream.
  console.log = console.info = console.debug = (...a: unknown[]) => console.error(...a);

  let server: AcpServer | undefined;
  const port =
    approval === 'ask'
      ? acpApprovalPort({
          table: { get: (id) => server?.table.get(id) },
          client: () => server?.client(),
          harnessOf: (id) => server?.harnessOf(id),
          touch: (id) => server?.feedOf(id)?.touch(id) ?? Promise.resolve(),
          timeoutMs,
        })
      : approval === 'auto'
        ? autoApprove
        : neverApprove;
  const nodes = pathOption(args, 'nodes');
  const nodeStores = pathOption(args, 'node-stores');
  if (!nodes !== !nodeStores) throw new UsageError('--nodes and --node-stores go together: the folder of the nodes and the folder of their stores');
  const nodeRepos = pathOption(args, 'node-repos');
  if (nodeRepos && !nodes) throw new UsageError("--node-repos goes with --nodes and --node-stores: it is where the nodes' repositories are kept");
  // The folder the command was started for keeps --store / $ARBOR_STORE; a node has its store in --node-stores; any other root has its own.
  const storeOf = (root: string): string => {
    const node = workspaces.nodeOf(root);
    if (node !== undefined) return path.join(nodeStores!, node);
    return root === realOr(defaultRoot) && explicitStore ? base.storeDir : path.join(root, '.arbor', 'store');
  };
  const workspaces = new Workspaces(
    (root) => {
      // A placement's node (decision 0077) is what the folder the command was started for used to be: trusted, its store given.
      const node = workspaces.nodeOf(root);
      const same = node !== undefined || root === realOr(defaultRoot);
      // A root whose `.arbor` (its store, its MCP allows), `.claude`, a configured program's names or repository a command made is not opened (decision 0111).
      if (node === undefined) refuseMadeByCommand(root, storeOf(root), programReadNames(base.remote));
      return {
        ...base,
        storeDir: storeOf(root),
        workspace: [root],
        // A root the client opened above the started-for folder (or the nodes' folder) holds its store: every harness protects them all.
        otherStores: [base.storeDir, ...(nodeStores ? [nodeStores] : [])],
        // A node's own .mcp.json as the started-for folder's (its --allow-mcp holds); another root's waits for its allow.
        ...(node !== undefined
          ? { mcp: mcpDeployment(rest, io.env, path.join(nodeStores!, node), root) }
          : same
            ? {}
            : {
                mcp: mcpDeployment(
                  { ...rest, options: new Map([...rest.options].filter(([k]) => k !== 'allow-mcp')) },
                  io.env,
                  path.join(root, '.arbor', 'store'),
                  root,
                ),
              }),
        approval: approval === 'never' ? 'never' : 'ask',
        approvalPort: port,
        childApproval,
        ...(childApproval === 'escalate' ? { escalateTimeoutMs: timeoutMs } : {}),
        // Hooks (decision 0057) read this root's files; only the folder the command was started for
        // counts as trusted (another root is one the client named): elsewhere only the user's own run.
        ...(base.hooks ? { hooks: { ...base.hooks, workspaceRoot: root, trusted: () => same } } : {}),
      };
    },
    storeOf,
    defaultRoot,
    nodes,
  );
  // A released node's harness is closed before its worktree is kept for the next node (decision 0114).
  const sync =
    nodes && nodeStores && nodeRepos
      ? new NodeSync(
          { nodes, stores: nodeStores, repos: nodeRepos },
          async (root) => server?.letGo(root),
          (l) => io.err(l),
        )
      : undefined;
  server = new AcpServer({
    version: arborVersion(),
    workspaces,
    forceSubagents: args.options.has('subagents'),
    // The workspace over this connection (decision 0081): only for a placement's nodes, in its own folders.
    ...(sync ? { sync } : {}),
    warn: (l) => io.err(l),
  });

  // A tick's messages leave in one write (decision 0065). Notifications are not held longer: a
  // 24 ms hold let a prompt's text ride with its answer, but moved the client's reading of it
  // onto the answer's path and measured no faster (the feed already coalesces streamed text).
  const out = new BatchedOutput({ write: (text) => process.stdout.write(text) }, 0);
  process.stdout.on('error', (err) => out.fail(err));
  // The SDK's line reader takes stdin (its replies to malformed lines go out through `out` too),
  // behind the guard that answers a line too large or too deep for it instead of closing.
  const stdin = guardInput(Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>, (r) => {
    const text = refusalText(r);
    io.err(`arbor acp: refused a message of ${r.bytes} bytes (${r.method ?? 'no method'}, id ${r.id ?? 'none'}): ${text}`);
    const answer = refusalAnswer(r, text);
    if (answer) out.send(answer as AnyMessage);
  });
  const input = ndJsonStream(out.bytes(), stdin, { maxMessageBytes: MAX_MESSAGE_BYTES });
  const conn = server.connect({ readable: input.readable, writable: out.messages() });
  // SIGTERM ends the agent as the client closing does (exit 0); Ctrl+C stops its remote programs, bounded, then exits 130.
  const stop = onStopSignals(io, { sigtermCode: 0 });
  const code = await Promise.race([conn.closed.then(() => 0), stop.signalled]);
  await server.cancelAll();
  await workspaces.close();
  await sync?.close();
  server.dispose();
  out.flush();
  conn.close();
  process.stdin.destroy();
  stop.finish();
  stop.dispose();
  // Whatever still holds the loop (a model socket being torn down) must not keep a closed agent alive.
  setTimeout(() => process.exit(code), 2000).unref();
  return code;
};

/** A folder flag's value, absolute (undefined when not given). */
function pathOption(args: ParsedArgs, name: string): string | undefined {
  const v = args.options.get(name);
  if (v === undefined) return undefined;
  if (v === true || !v.trim()) throw new UsageError(`--${name} needs a folder`);
  return path.resolve(v);
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
