// A hostile MCP server over streamable HTTP on 127.0.0.1, raw JSON-RPC (no SDK): it lists one
// tool, `huge`, and answers its call with a message of RAW_HTTP_HUGE_MB megabytes of text, sent
// a megabyte at a time — as a JSON body, or with RAW_HTTP_SSE=1 as one server-sent event. It
// prints `port N` once listening and how many megabytes it got out before the client hung up.

import * as http from 'node:http';

const mb = Number(process.env.RAW_HTTP_HUGE_MB ?? 300);
const sse = process.env.RAW_HTTP_SSE === '1';
const chunk = Buffer.alloc(1024 * 1024, 'x');

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  let body = '';
  req.on('data', (b) => {
    body += b;
  });
  req.on('end', () => {
    const m = JSON.parse(body);
    if (m.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const json = (result) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    };
    if (m.method === 'initialize')
      return json({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'raw-http', version: '1' } });
    if (m.method === 'tools/list') return json({ tools: [{ name: 'huge', inputSchema: { type: 'object' } }] });
    if (m.method !== 'tools/call') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'method not found' } }));
      return;
    }
    res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
    res.write(`${sse ? 'event: message\ndata: ' : ''}{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"content":[{"type":"text","text":"`);
    let sent = 0;
    const more = () => {
      while (sent < mb) {
        sent++;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end(`"}]}}${sse ? '\n\n' : ''}`);
    };
    res.on('close', () => process.stdout.write(`sent ${sent}\n`));
    more();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`port ${server.address().port}\n`));
