import { decideApproval, describeDenial } from '../policy/approval';
import type { CeilingSource } from '../policy/sandbox';
import { fail, guard, refused } from '../tools/result';
import type { JsonSchema, Tool, ToolContext, ToolResult } from '../tools/tool';
import type { McpToolDef } from './connection';

/** What a tool needs of its server's session, handed in (tools take their I/O). */
export interface McpToolPort {
  /** Call the tool now, or answer why the server cannot (not allowed, restarting, failed). */
  call(server: string, name: string, tool: McpToolDef, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
  /** True when the user allowed this server or this tool up front (no ask). */
  preAllowed(server: string, toolName: string): boolean;
}

const MAX_ARGS_SHOWN = 400;

/** Where the user allows an MCP tool up front, the one way a call runs under a ceiling (decision 0125, amended in s60). */
const UP_FRONT: Readonly<Record<CeilingSource, string>> = {
  'cli-sandbox': '--mcp-allow-tools SERVER or mcp__SERVER__TOOL',
  'restricted-mode': 'the user setting arbor.mcp.allowTools',
};

/**
 * One MCP tool as an Arbor tool. A call is an action outside the sandbox (decision 0055): the
 * server runs with the user's rights, not under bubblewrap, so it needs approval unless the
 * user allowed the server or the tool; the policy `never` (a delegated child by default) is
 * refused, and "allow for this conversation" records a grant for this one tool. In a read-only
 * session the up-front allow covers only tools annotated `readOnlyHint: true`; any other call
 * asks (under `never`, is refused), so a read-only child never writes through an allowed server.
 * Under a ceiling (an explicit CLI `--sandbox`, Restricted Mode; decision 0125, amended in s60)
 * the ask is no question at all: the server is outside the sandbox, so no approval (`--approval
 * auto`, a grant) lets a call run — only the user's allow up front, as above.
 */
export function mcpTool(server: string, name: string, def: McpToolDef, port: McpToolPort): Tool {
  const description = `[MCP server "${server}"] ${def.description ?? def.title ?? def.name}`.slice(0, 2000);
  const parameters = (def.inputSchema ?? { type: 'object' }) as JsonSchema;
  return {
    name,
    description,
    parameters,
    execute: (args, ctx) =>
      guard(name, ctx.signal, async () => {
        // A read-only session (a root the user made so, or a child its caller narrowed) changes
        // nothing: an up-front allow covers only the tools the server declares read-only there.
        const narrowed = ctx.sandbox === 'read-only' && def.annotations?.readOnlyHint !== true;
        if (!port.preAllowed(server, name) || narrowed) {
          const shown = JSON.stringify(args);
          const summary = `Call ${def.name} on MCP server "${server}" with ${shown.length > MAX_ARGS_SHOWN ? `${shown.slice(0, MAX_ARGS_SHOWN)}…` : shown}`;
          const answer = await decideApproval(ctx, {
            tool: name,
            summary,
            reason:
              `MCP server "${server}" runs outside Arbor's sandbox with your rights; this call may read or change anything the server can reach.` +
              (narrowed ? ` This session is read-only and the server does not declare ${def.name} read-only.` : ''),
            // A tool name is one word: a grant covers this tool of this server, for this conversation.
            target: { kind: 'command', command: name },
            // The server runs with the user's rights, outside any sandbox: past a ceiling whatever the answer.
            unconfined: true,
          });
          if (!answer.approved)
            return refused(
              `${name}: ${describeDenial(answer.outcome, answer.reason)}. The call to MCP server "${server}" was not made.` +
                (answer.outcome === 'ceiling' ? ` ${upFront(ctx.ceiling?.by, narrowed)}` : '') +
                (narrowed && answer.outcome !== 'ceiling'
                  ? ` This session is read-only, and an up-front allow covers only the tools a server declares read-only (readOnlyHint); ${def.name} is not one. Give the work to a session with a wider sandbox, or ask the user.`
                  : ''),
              {
                outcome: answer.outcome,
                summary,
              },
            );
        }
        if (ctx.signal.aborted) return fail('CANCELLED', `${name}: cancelled before the call was made`);
        return port.call(server, name, def, args, ctx);
      }),
  };
}

/** How a call runs under a ceiling: allowed up front by the user (in read-only, only a tool the server declares read-only). */
function upFront(by: CeilingSource | undefined, narrowed: boolean): string {
  const where = by ? UP_FRONT[by] : "the deployment's list of MCP tools allowed up front";
  return narrowed
    ? `Under this ceiling only a tool the server declares read-only runs, and only when allowed up front (${where}).`
    : `Under this ceiling an MCP call runs only when the user allowed the tool up front (${where}).`;
}
