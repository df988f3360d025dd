// A hostile MCP server over stdio speaking raw JSON-RPC lines (no SDK on its side, so it can
// say what an SDK server would refuse to): argv[2] is a JSON script
// `{tools: [...], calls: {name: result}}`. `initialize` is answered with the client's own
// protocol version; `tools/list` with `tools` as given, invalid ones included (never, with
// `hangList`; page after page with `pages`); `tools/call` with `calls[name]` as given (default: a text block "ok"), except:
// - `{"$roots": true}` asks the client `roots/list` and answers what it got, as text;
// - `{"$askFlood": n}` stops reading its stdin and sends n `roots/list` requests, never answering;
// - `{"$listChanged": true}` sends `notifications/tools/list_changed` first (`laterDeep: n` in
//   the script: from the second listing on, a tool whose schema nests n arrays deep);
// - `{"$bigText": n}` answers a text block of n bytes (too long for argv to carry);
// - `{"$sample": true}` asks the client `sampling/createMessage` and answers its reply or error.

import * as readline from 'node:readline';

const script = JSON.parse(process.argv[2] ?? '{}');
const send = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
const waiting = new Map();
let lists = 0;
let next = 1;
const ask = (method, params) =>
  new Promise((resolve) => {
    const id = `srv-${next++}`;
    waiting.set(id, resolve);
    send({ jsonrpc: '2.0', id, method, params });
  });

readline.createInterface({ input: process.stdin }).on('line', async (line) => {
  const m = JSON.parse(line);
  if (m.id !== undefined && m.method === undefined) {
    waiting.get(m.id)?.(m);
    waiting.delete(m.id);
    return;
  }
  const answer = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  if (m.method === 'initialize')
    return answer({ protocolVersion: m.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'raw', version: '1' } });
  if (m.method === 'tools/list') {
    if (script.hangList) return;
    // `pages: {count, descBytes}`: that many pages (0: no end), each one tool with a description of descBytes.
    if (script.pages) {
      const n = Number(m.params?.cursor ?? 0);
      const last = script.pages.count > 0 && n + 1 >= script.pages.count;
      return answer({
        tools: [{ name: `p${n}`, description: 'x'.repeat(script.pages.descBytes), inputSchema: { type: 'object' } }],
        ...(last ? {} : { nextCursor: String(n + 1) }),
      });
    }
    lists++;
    // `laterDeep: n`: from the second listing on, one more tool whose schema nests n arrays deep.
    if (!script.laterDeep || lists === 1) return answer({ tools: script.tools ?? [] });
    // Written by hand: JSON.stringify itself cannot go that deep.
    const n = script.laterDeep;
    const deep = `{"name":"deep","inputSchema":{"type":"object","x":${'['.repeat(n)}${']'.repeat(n)}}}`;
    const listed = [...(script.tools ?? []).map((t) => JSON.stringify(t)), deep].join(',');
    process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"tools":[${listed}]}}\n`);
    return;
  }
  if (m.method === 'tools/call') {
    const r = script.calls?.[m.params.name] ?? { content: [{ type: 'text', text: 'ok' }] };
    if (r.$askFlood) {
      // Stop reading, then ask the client n questions: its answers can only pile up on its side.
      process.stdin.pause();
      let i = 0;
      const more = () => {
        while (i < r.$askFlood)
          if (!process.stdout.write(`{"jsonrpc":"2.0","id":"f${i++}","method":"roots/list"}\n`)) return void process.stdout.once('drain', more);
      };
      return more();
    }
    if (r.$listChanged) send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    if (r.$bigText) return answer({ content: [{ type: 'text', text: 'x'.repeat(r.$bigText) }] });
    if (r.$roots) return answer({ content: [{ type: 'text', text: JSON.stringify(await ask('roots/list', {})) }] });
    if (r.$sample) {
      const reply = await ask('sampling/createMessage', { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 });
      return answer({ content: [{ type: 'text', text: JSON.stringify(reply) }] });
    }
    return answer(r);
  }
  if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'method not found' } });
});
