import * as fs from 'node:fs';
import type { Harness } from '../core/harness';
import { describeConfigError, type McpConfigRead, type McpServerConfig, merge, needsAllow, readServerFile, readWorkspaceServers } from '../core/mcp/config';
import type { McpDeployment } from '../core/mcp/deployment';
import { checkRunAllow } from '../core/mcp/pins';
import { runsLine } from '../core/mcp/secrets';
import type { McpServerState } from '../core/mcp/state';
import { FileTrust } from '../core/mcp/trust-file';
import { type ParsedArgs, UsageError } from './args';
import type { Command, Io } from './output';
import { printable } from './output';

// The CLI's MCP (decision 0055): `--mcp-config FILE` is the user's own choice and its servers
// start; the workspace's `.mcp.json` / `.vscode/mcp.json` servers start only once allowed
// (`--allow-mcp NAME`, or `arbor mcp allow NAME`, remembered in the store folder per workspace).
// `--allow-mcp NAME` starts only what NAME ran when first allowed here (decision 0112).

const list = (v: string | true | undefined): string[] =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

/** The deployment a CLI command runs with: the workspace's servers, any `--mcp-config` file's, who may start them. */
export function mcpDeployment(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  storeDir: string,
  workspace: string,
  notices: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): McpDeployment {
  const reads: McpConfigRead[] = [readWorkspaceServers(workspace, env)];
  for (const file of list(args.options.get('mcp-config'))) {
    if (!fs.existsSync(file)) throw new UsageError(`--mcp-config ${file}: no such file`);
    reads.push(readServerFile(file, 'mcpServers', 'cli'));
  }
  const read = merge(reads);
  const trust = new FileTrust(storeDir, workspace);
  const allowNow = new Set(list(args.options.get('allow-mcp')));
  for (const name of allowNow) {
    const s = read.servers.find((x) => x.name === name);
    if (!s) throw new UsageError(`--allow-mcp ${name}: no MCP server of that name in ${workspace}/.mcp.json or .vscode/mcp.json`);
    if (needsAllow(s.source)) allowForThisRun(s, trust, notices);
  }
  return {
    servers: read.servers,
    errors: read.errors,
    allowTools: list(args.options.get('mcp-allow-tools')),
    // In the CLI the folder it runs in counts as trusted (as `claude -p` treats it); each server still needs its allow.
    workspaceTrusted: true,
    trust: {
      isAllowed: (s) => allowNow.has(s.name) || trust.isAllowed(s),
      allowedBefore: (name) => trust.allowedBefore(name),
      allow: (s) => trust.allow(s),
    },
  };
}

/**
 * `--allow-mcp NAME` names a server, not what it runs: a script that passes it on every run would
 * start whatever the workspace's file says that day (a file a command could have rewritten where no
 * sandbox stood between, a pull, a branch switched). So it starts what it started the first time
 * here, or what `arbor mcp allow` last allowed, and nothing else: a change is refused, saying what
 * changed and how to allow it again.
 */
function allowForThisRun(s: McpServerConfig, trust: FileTrust, notices: (line: string) => void): void {
  const verdict = checkRunAllow(s, trust.recordOf(s.name));
  if (!verdict.ok)
    throw new UsageError(
      printable(
        `MCP_CHANGED --allow-mcp ${s.name}: MCP server "${s.name}" in ${s.file ?? 'the workspace'} changed since it was last allowed here ` +
          `(${verdict.changed.join(', ')}); it now runs: ${runsLine(s)}. Nothing was started. If you made this change, allow it again with ` +
          `'arbor mcp allow ${s.name}' (it starts the server once and remembers what it runs); if you did not, put the file back as it was.`,
      ),
    );
  if (!verdict.first) return;
  trust.pin(s);
  notices(
    printable(
      `arbor: --allow-mcp ${s.name}: first allowed here; it runs ${runsLine(s)}. A later change to what it runs is refused until you allow it again (arbor mcp allow ${s.name}).`,
    ),
  );
}

/** One line per server for a person: name, state, tool count, where it came from, why. */
export function describeServer(s: McpServerState): string {
  const where = s.file ?? s.source;
  const tools = s.phase === 'ready' ? ` ${s.toolCount} tool${s.toolCount === 1 ? '' : 's'}` : '';
  return printable(`${s.name}  ${s.phase}${tools}  (${where})${s.why ? `: ${s.why}` : ''}`);
}

/** Before the first turn: every server started (or failed), and what is wrong said on stderr. */
export async function mcpReady(h: Harness, io: Io): Promise<void> {
  await h.mcp.whenSettled();
  for (const e of h.mcp.configErrors()) io.err(printable(`arbor: ${describeConfigError(e)}`));
  for (const s of h.mcp.states()) {
    if (s.phase === 'needs-allow')
      io.err(`arbor: MCP server "${s.name}" not started: ${s.why}. Allow it with 'arbor mcp allow ${s.name}' or --allow-mcp ${s.name}.`);
    else if (s.phase === 'failed') io.err(printable(`arbor: MCP server "${s.name}" failed: ${s.why ?? 'no reason given'}`));
    else if (s.phase === 'ready' && s.why) io.err(printable(`arbor: MCP server "${s.name}": ${s.why}`));
  }
}

/**
 * `arbor mcp list [--json]`: the configured servers, started to show their state and tool count.
 * `arbor mcp allow NAME`: remember that this workspace's server NAME may start, then start it once to check.
 */
export function mcpCommand(open: (args: ParsedArgs, io: Io) => Promise<Harness>): Command {
  return async (args, io) => {
    const [sub, name] = args.positionals;
    if (sub !== 'list' && sub !== 'allow') throw new UsageError("arbor mcp needs 'list' or 'allow NAME'");
    if (sub === 'allow' && !name) throw new UsageError('arbor mcp allow needs a server NAME (see arbor mcp list)');
    const h = await open(args, io);
    try {
      await h.mcp.whenSettled();
      if (sub === 'allow') {
        let s: McpServerState;
        try {
          s = await h.mcp.allow(name!);
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
        await h.mcp.whenSettled();
        s = h.mcp.states().find((x) => x.name === s.name) ?? s;
        io.out(describeServer(s));
        return s.phase === 'ready' ? 0 : 1;
      }
      for (const e of h.mcp.configErrors()) io.err(printable(describeConfigError(e)));
      const states = h.mcp.states();
      if (args.options.has('json')) for (const s of states) io.out(JSON.stringify(s));
      else if (states.length === 0) io.out('No MCP servers configured (.mcp.json, .vscode/mcp.json or --mcp-config FILE).');
      else for (const s of states) io.out(describeServer(s));
      return 0;
    } finally {
      await h.close();
    }
  };
}
