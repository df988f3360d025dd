import { formatBytes, ok } from '../tools/result';
import type { ToolResult } from '../tools/tool';
import type { CallToolResult } from './connection';
import { redact } from './secrets';

// An MCP result is a list of content blocks; a tool result on Arbor's wire (and in the log) is
// text. Text blocks pass as they are; an image or audio block becomes a line naming its type and
// size (the chat-completions tool message carries no image, and base64 in the log would cost the
// prefix cache and the store for nothing the model can read); a resource link is a Markdown link
// the transcript renders; an embedded resource gives its text, or a line naming it.

type Block = CallToolResult['content'][number];

const MAX_TEXT = 100_000;

const BLOCK: { [K in Block['type']]: (b: Extract<Block, { type: K }>) => string } = {
  text: (b) => b.text,
  image: (b) => `[image ${b.mimeType}, ${formatBytes(Math.floor((b.data.length * 3) / 4))}: not shown to the model]`,
  audio: (b) => `[audio ${b.mimeType}, ${formatBytes(Math.floor((b.data.length * 3) / 4))}: not shown to the model]`,
  resource_link: (b) => `[${b.name || b.uri}](${b.uri})${b.description ? ` — ${b.description}` : ''}`,
  resource: (b) =>
    'text' in b.resource && typeof b.resource.text === 'string'
      ? `Resource ${b.resource.uri}:\n${b.resource.text}`
      : `[resource ${b.resource.uri}${b.resource.mimeType ? `, ${b.resource.mimeType}` : ''}: binary, not shown]`,
};

/** The text the model and the transcript get for a server's answer; secrets of the server's config redacted. */
export function mapResult(server: string, r: CallToolResult, secrets: readonly string[]): ToolResult {
  const parts = (r.content ?? []).map((b) => (BLOCK[b.type] as (x: Block) => string)?.(b) ?? `[${b.type} content: not shown]`);
  if (parts.length === 0 && r.structuredContent !== undefined) parts.push(JSON.stringify(r.structuredContent));
  let text = redact(parts.join('\n'), secrets);
  if (text.length > MAX_TEXT) text = `${text.slice(0, MAX_TEXT)}\n[… ${text.length - MAX_TEXT} more characters cut: the result was too long]`;
  if (r.isError) return { content: `MCP server "${server}" reported an error: ${text || '(no message)'}`, isError: true, code: 'IO_ERROR' };
  return ok(text === '' ? '(the tool returned no content)' : text);
}
