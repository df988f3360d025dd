export interface ExpandContext {
  workspaceFolder: string;
  env: NodeJS.ProcessEnv;
}

// The variables VS Code expands in mcp.json (`${workspaceFolder}`, `${env:NAME}`,
// `${userHome}`) and Claude Code's `${NAME}` / `${NAME:-default}` in .mcp.json. An unknown
// `${input:…}` is left as written: Arbor has no input prompts, and a visible placeholder says why
// a server fails better than an empty string would.
const VAR = /\$\{([^}]+)\}/g;

export function expandVariables(text: string, ctx: ExpandContext): string {
  return text.replace(VAR, (whole, body: string) => {
    if (body === 'workspaceFolder' || body === 'workspaceRoot') return ctx.workspaceFolder;
    if (body === 'userHome') return ctx.env.HOME ?? ctx.env.USERPROFILE ?? whole;
    if (body.startsWith('env:')) return ctx.env[body.slice(4)] ?? '';
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/.exec(body);
    if (m) return ctx.env[m[1]] ?? m[2] ?? '';
    return whole;
  });
}
