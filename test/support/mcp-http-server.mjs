// server-everything over streamable HTTP on 127.0.0.1 and a free port (its own launcher binds
// every interface on a fixed port): prints `port <n>` once listening; ends on SIGTERM.

import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createServer } from '@modelcontextprotocol/server-everything/dist/server/index.js';

const transports = new Map();
const requiredAuth = process.env.MCP_TEST_TOKEN;

const http = createHttpServer(async (req, res) => {
  if (requiredAuth && req.headers.authorization !== `Bearer ${requiredAuth}`) {
    res.writeHead(401).end('unauthorized');
    return;
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  const sid = req.headers['mcp-session-id'];
  let transport = sid ? transports.get(sid) : undefined;
  if (!transport) {
    const { server } = createServer();
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    await server.connect(transport);
  }
  await transport.handleRequest(req, res, body);
});
http.listen(0, '127.0.0.1', () => console.log(`port ${http.address().port}`));
process.on('SIGTERM', () => process.exit(0));
