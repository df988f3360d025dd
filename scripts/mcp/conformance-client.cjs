// The client side of `@modelcontextprotocol/conformance` driving Arbor's MCP client (decision
// 0055): `conformance client --command "node scripts/mcp/conformance-client.cjs" --scenario X`
// passes the scenario server's URL last. The manager connects over streamable HTTP, lists the
// tools and calls each one (add_numbers with numbers), as an agent's allowed calls would.
const path = require('node:path');
const out = path.join(__dirname, '..', '..', 'out', 'src', 'core');
const { McpManager } = require(path.join(out, 'mcp', 'manager'));
const { ScopeRegistry } = require(path.join(out, 'scope', 'registry'));

async function main() {
  const url = process.argv[process.argv.length - 1];
  const tools = new ScopeRegistry();
  const m = new McpManager(
    { tools, roots: [process.cwd()] },
    { servers: [{ name: 'conf', source: 'cli', transport: { kind: 'http', url, headers: {} } }], allowTools: ['conf'] },
  );
  await m.whenSettled();
  const [state] = m.states();
  console.error(`state: ${JSON.stringify(state)}`);
  const ctx = { sessionId: 'conformance', roots: [process.cwd()], sandbox: 'workspace-write', approvalPolicy: 'ask', signal: new AbortController().signal };
  for (const t of tools.view()) {
    const args = t.name.endsWith('add_numbers') ? { a: 2, b: 3 } : {};
    const r = await t.execute(args, ctx);
    console.error(`${t.name}: ${r.isError ? 'error' : 'ok'}: ${r.content.slice(0, 200)}`);
  }
  await m.close();
  process.exit(state.phase === 'ready' ? 0 : 1);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
