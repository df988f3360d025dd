// Realistic events for the benchmark: a deterministic generator of sessions whose mean event
// is ~500 bytes serialized (prose, code, tool calls, usage), and the helpers around it.
import type { SessionEvent, SessionHeader } from '../src/core/session/events';
import { prng as rng } from '../test/support/store-fixtures';

/** mulberry32: a small deterministic PRNG (uniform in [0, 1)), the one the store fixtures use. */
export { rng };

/** A shuffled copy (Fisher–Yates). */
export function shuffle<T>(xs: readonly T[], random: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const PROSE = `I looked at the store module and the journal is replayed at open before the catalog is reconciled. \
The failing test expects the session to be listed after a crash between the tree write and the catalog write, \
so reconcile has to index tree files the catalog does not know. Next I will read the tree file code, check how \
headers are copied, and then run the focused test again. If it still fails I will add a trace of the lsn values. \
Let me also check whether the checkpoint threshold uses the database size, since a large tree would otherwise \
export the whole file far too often. The change is small: one guard and a test that kills the writer mid-append. `;

const CODE = `export async function loadConfig(file: string): Promise<Config> {
  const text = await fs.promises.readFile(file, "utf8");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(\`\${file} is not valid JSON: \${(err as Error).message}\`);
  }
  if (typeof raw !== "object" || raw === null) throw new ConfigError(\`\${file} must hold an object\`);
  const cfg = { ...DEFAULTS, ...(raw as Partial<Config>) };
  for (const [key, value] of Object.entries(cfg)) {
    if (value === undefined) delete (cfg as Record<string, unknown>)[key];
  }
  return cfg;
}

describe("loadConfig", () => {
  it("merges defaults", async () => {
    const cfg = await loadConfig(fixture("partial.json"));
    assert.equal(cfg.model, "deepseek-chat");
    assert.deepEqual(cfg.tools, ["read_file", "search_files"]);
  });
});
`;

const CODE2 = CODE + CODE.replace(/Config/g, 'Settings');
const FILES = ['src/core/store/tree.ts', 'src/core/store/journal.ts', 'src/config/load.ts', 'test/store.test.ts', 'README.md', 'src/core/agent/agent.ts'];
const TOOLS = ['read_file', 'search_files', 'list_files', 'run_command', 'edit_file'];
const T0 = Date.parse('2025-06-01T09:00:00.000Z');

function slice(src: string, r: () => number, min: number, max: number): string {
  const len = Math.min(src.length, Math.floor(min + r() * (max - min)));
  const start = Math.floor(r() * (src.length - len));
  // Flatten (no sliced string pinning the corpus) so sizes and copies are realistic.
  return ` ${src.slice(start, start + len)}`.slice(1);
}

function hex(r: () => number, n: number): string {
  let s = '';
  while (s.length < n)
    s += Math.floor(r() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return s.slice(0, n);
}

// One turn is 10 events: a user message, two tool round trips, a final answer.
// Sizes are tuned so the mean serialized event is ~500 bytes (see eventBytes()).
const TURN = 10;

/** The event at `seq` of a synthetic session: deterministic, valid under Session's ordering rules. */
export function makeEvent(seq: number): SessionEvent {
  const r = rng(seq * 2654435761 + 12345);
  const turn = Math.floor(seq / TURN);
  const pos = seq % TURN;
  const at = new Date(T0 + seq * 1500).toISOString();
  const turnId = `turn-${turn}`;
  const model = 'deepseek-chat';
  const usage = () => ({ promptTokens: 8000 + Math.floor(r() * 40000), completionTokens: 50 + Math.floor(r() * 900), cacheHitTokens: Math.floor(r() * 8000) });
  const call = (k: number) => `call_${turn}_${k}`;
  const tool = (k: number) => TOOLS[(turn + k) % TOOLS.length];
  switch (pos) {
    case 0:
      return { seq, type: 'turn/start', at, turnId };
    case 1:
      return { seq, type: 'user/message', at, text: slice(PROSE, r, 180, 540), source: { kind: 'user' }, messageId: `msg-${turn}` };
    case 2:
    case 5:
      return {
        seq,
        type: 'request/header',
        at,
        model,
        provider: 'deepseek',
        bytes: 30000 + Math.floor(r() * 90000),
        headBytes: 12000,
        headHash: hex(r, 64),
        prefixHash: hex(r, 64),
      };
    case 3:
    case 6: {
      const k = pos === 3 ? 0 : 1;
      const file = FILES[Math.floor(r() * FILES.length)];
      return {
        seq,
        type: 'assistant/message',
        at,
        text: slice(PROSE, r, 60, 200),
        reasoning: slice(PROSE, r, 80, 260),
        toolCalls: [{ id: call(k), name: tool(k), arguments: JSON.stringify({ path: file, query: 'checkpoint', maxResults: 20 }) }],
        usage: usage(),
        model,
      };
    }
    case 4:
    case 7: {
      const k = pos === 4 ? 0 : 1;
      return { seq, type: 'tool/result', at, callId: call(k), name: tool(k), content: slice(CODE2, r, 450, 980), isError: false };
    }
    case 8:
      return { seq, type: 'assistant/message', at, text: slice(PROSE, r, 300, 640), usage: usage(), model };
    default:
      return { seq, type: 'turn/end', at, turnId, stopReason: 'completed' };
  }
}

/** Events [from, from + n). */
export function makeEvents(from: number, n: number): SessionEvent[] {
  const out = new Array<SessionEvent>(n);
  for (let i = 0; i < n; i++) out[i] = makeEvent(from + i);
  return out;
}

/** Bytes of the events as stored: each event's JSON, UTF-8. */
export function eventBytes(events: readonly SessionEvent[]): number {
  let n = 0;
  for (const e of events) n += Buffer.byteLength(JSON.stringify(e));
  return n;
}

export function header(id: string): SessionHeader {
  return { id, createdAt: new Date(T0).toISOString(), origin: 'user', title: 'bench session', cwd: '/work/project' };
}
