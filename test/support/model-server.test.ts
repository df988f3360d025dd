import assert from 'node:assert/strict';
import { ModelServer, type Reply } from './model-server';

// The model server's scripted faults are what the reply-anomaly, crash and interrupt tests
// stand on: a `stall` must stall whatever the reply holds. With `afterChunks` past the reply's
// chunks (a stall with no text at all) it once finished the reply instead, and a test built on
// "this turn is still streaming" silently tested a finished one.

const QUIET_MS = 300;

/** What a streamed request received within `QUIET_MS`: the raw SSE text, and whether the response ended. */
async function streamFor(server: ModelServer, path: string, body: object): Promise<{ text: string; ended: boolean }> {
  const aborter = new AbortController();
  const res = await fetch(`${server.baseURL}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
    body: JSON.stringify(body),
    signal: aborter.signal,
  });
  assert.equal(res.status, 200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  const timer = setTimeout(() => aborter.abort(), QUIET_MS);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      text += decoder.decode(value, { stream: true });
    }
  } catch (err) {
    if (!aborter.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
  }
  return { text, ended };
}

const chat = (server: ModelServer) => streamFor(server, '/chat/completions', { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });

/** The chat chunks' content deltas, in order (the role chunk and empty deltas left out). */
function contents(sse: string): string[] {
  return sse
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice('data: '.length)) as { choices: { delta: { content?: string } }[] })
    .flatMap((c) => c.choices.map((x) => x.delta.content ?? ''))
    .filter((t) => t !== '');
}

describe('test support: the model server', () => {
  let server: ModelServer;
  beforeEach(async () => {
    server = await ModelServer.start();
  });
  afterEach(async () => {
    await server.stop();
  });

  const stall = (reply: Omit<Reply, 'fault'>, afterChunks: number): Reply => ({ ...reply, fault: { kind: 'stall', afterChunks } });

  it('a stall with no text stalls: no chunk, no finish, the connection left open', async () => {
    server.enqueue(stall({}, 5));
    const r = await chat(server);
    assert.equal(r.ended, false, 'the response never ends');
    assert.deepEqual(contents(r.text), []);
    assert.doesNotMatch(r.text, /"finish_reason":"/);
    assert.doesNotMatch(r.text, /\[DONE\]/);
    assert.equal(server.streaming, 1, 'the reply is still being produced');
  });

  it('a stall past the end of its reply sends every chunk, then stalls instead of finishing', async () => {
    server.enqueue(stall({ text: 'abcdefgh12345678', chunkSize: 8 }, 10));
    const r = await chat(server);
    assert.equal(r.ended, false);
    assert.deepEqual(contents(r.text), ['abcdefgh', '12345678'], 'min(afterChunks, chunks) = 2 chunks');
    assert.doesNotMatch(r.text, /"finish_reason":"/);
  });

  it('a stall within its reply sends afterChunks chunks, then stalls', async () => {
    server.enqueue(stall({ text: 'abcdefgh12345678xyz', chunkSize: 8 }, 1));
    const r = await chat(server);
    assert.equal(r.ended, false);
    assert.deepEqual(contents(r.text), ['abcdefgh']);
  });

  it('a stall of a reply with tool calls only stalls after them', async () => {
    server.enqueue(stall({ toolCalls: [{ name: 'read_file', arguments: { path: 'a' } }] }, 50));
    const r = await chat(server);
    assert.equal(r.ended, false);
    assert.match(r.text, /"name":"read_file"/);
    assert.doesNotMatch(r.text, /"finish_reason":"/);
  });

  it('the Responses and Messages wires stall the same way when the reply has no text', async () => {
    for (const path of ['/responses', '/messages']) {
      server.enqueue(stall({}, 3));
      const r = await streamFor(server, path, { model: 'm', stream: true, input: 'hi', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(r.ended, false, `${path}: the response never ends`);
      assert.doesNotMatch(r.text, /response\.completed|message_stop/, `${path}: no finish frame`);
    }
  });

  it('a disconnect past the end of its reply lets it finish (only a stall always strikes)', async () => {
    server.enqueue({ text: 'short', fault: { kind: 'disconnect', afterChunks: 10 } });
    const r = await chat(server);
    assert.equal(r.ended, true);
    assert.deepEqual(contents(r.text), ['short']);
    assert.match(r.text, /"finish_reason":"stop"/);
    assert.match(r.text, /\[DONE\]/);
  });

  it('a reply without a fault finishes', async () => {
    server.enqueue({ text: 'done' });
    const r = await chat(server);
    assert.equal(r.ended, true);
    assert.deepEqual(contents(r.text), ['done']);
  });
});
